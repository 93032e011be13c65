import unittest

from records import record


class TestCsvline(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(record('Ann, 31'), {'name': 'Ann', 'age': 31})


if __name__ == '__main__':
    unittest.main()
