import unittest

from strings import is_palindrome


class TestStrings(unittest.TestCase):
    def test_case_1(self):
        self.assertIs(is_palindrome('Racecar'), True)


if __name__ == '__main__':
    unittest.main()
