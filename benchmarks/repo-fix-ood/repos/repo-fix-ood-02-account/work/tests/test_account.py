import unittest

from account import Account


class TestAccount(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(Account(10).deposit(5), 15)


if __name__ == '__main__':
    unittest.main()
