import unittest

from prices import total


class HiddenPrices(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(total([2, 3, 4]), 9)

    def test_case_2(self):
        self.assertEqual(total([]), 0)

    def test_case_3(self):
        self.assertEqual(total([5]), 5)

    def test_case_4(self):
        self.assertEqual(total([1, 1, 1, 1]), 4)


if __name__ == '__main__':
    unittest.main()
