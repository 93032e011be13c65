import unittest

from evens import count_even


class HiddenEvens(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_even([2, 4, 5]), 2)

    def test_case_2(self):
        self.assertEqual(count_even([]), 0)

    def test_case_3(self):
        self.assertEqual(count_even([2, 4, 6]), 3)

    def test_case_4(self):
        self.assertEqual(count_even([-2, -1]), 1)


if __name__ == '__main__':
    unittest.main()
