import unittest

from strings import is_palindrome


class HiddenStrings(unittest.TestCase):
    def test_case_1(self):
        self.assertIs(is_palindrome('Racecar'), True)

    def test_case_2(self):
        self.assertIs(is_palindrome('A man, a plan, a canal: Panama'), True)

    def test_case_3(self):
        self.assertIs(is_palindrome('abc'), False)


if __name__ == '__main__':
    unittest.main()
