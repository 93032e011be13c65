import unittest

from stats import average


class HiddenStats(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(average([2, 4, 6]), 4)

    def test_case_2(self):
        self.assertEqual(average([5]), 5)

    def test_case_3(self):
        self.assertEqual(average([1, 2]), 1.5)


if __name__ == '__main__':
    unittest.main()
