import unittest

from calendar_util import is_leap


class HiddenCalendarUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertIs(is_leap(2000), True)

    def test_case_2(self):
        self.assertIs(is_leap(1900), False)

    def test_case_3(self):
        self.assertIs(is_leap(2024), True)

    def test_case_4(self):
        self.assertIs(is_leap(2023), False)


if __name__ == '__main__':
    unittest.main()
