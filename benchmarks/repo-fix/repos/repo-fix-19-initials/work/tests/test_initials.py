import unittest

from initials import initials


class TestInitials(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(initials('ada lovelace'), 'AL')


if __name__ == '__main__':
    unittest.main()
