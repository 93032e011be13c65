import unittest

from inventory import stock


class TestInventory(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(stock(['apple: 3']), {'apple': 3})


if __name__ == '__main__':
    unittest.main()
