import unittest

from calendar_util import is_leap


class TestCalendarUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertIs(is_leap(2000), True)


if __name__ == '__main__':
    unittest.main()
