import unittest

from grades import grade


class TestGrades(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(grade(90), 'A')


if __name__ == '__main__':
    unittest.main()
