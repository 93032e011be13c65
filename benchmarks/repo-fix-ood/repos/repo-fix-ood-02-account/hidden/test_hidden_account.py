import unittest

from account import Account


class HiddenAccount(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(Account(10).deposit(5), 15)

    def test_case_2(self):
        self.assertEqual(Account().deposit(0), 0)

    def test_case_3(self):
        self.assertEqual(Account(1).deposit(2), 3)


if __name__ == '__main__':
    unittest.main()
