import unittest

from ranges import inclusive_range


class HiddenRanges(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(inclusive_range(1, 3), [1, 2, 3])

    def test_case_2(self):
        self.assertEqual(inclusive_range(5, 5), [5])

    def test_case_3(self):
        self.assertEqual(inclusive_range(-1, 1), [-1, 0, 1])


if __name__ == '__main__':
    unittest.main()
