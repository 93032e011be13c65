import unittest

from inventory import stock


class HiddenInventory(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(stock(['apple: 3']), {'apple': 3})

    def test_case_2(self):
        self.assertEqual(stock([]), {})

    def test_case_3(self):
        self.assertEqual(stock(['a:1', 'b: 10 ']), {'a': 1, 'b': 10})


if __name__ == '__main__':
    unittest.main()
