import unittest

from initials import initials


class HiddenInitials(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(initials('ada lovelace'), 'AL')

    def test_case_2(self):
        self.assertEqual(initials('Grace Brewster Hopper'), 'GBH')

    def test_case_3(self):
        self.assertEqual(initials('x'), 'X')


if __name__ == '__main__':
    unittest.main()
