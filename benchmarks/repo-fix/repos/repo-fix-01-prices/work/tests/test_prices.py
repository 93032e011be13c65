import unittest

from prices import total


class TestPrices(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(total([2, 3, 4]), 9)


if __name__ == '__main__':
    unittest.main()
