import unittest

from records import record


class HiddenCsvline(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(record('Ann, 31'), {'name': 'Ann', 'age': 31})

    def test_case_2(self):
        self.assertEqual(record('Bo,7'), {'name': 'Bo', 'age': 7})


if __name__ == '__main__':
    unittest.main()
