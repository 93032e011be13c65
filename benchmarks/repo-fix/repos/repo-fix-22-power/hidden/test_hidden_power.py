import unittest

from power import square_all


class HiddenPower(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(square_all([3]), [9])

    def test_case_2(self):
        self.assertEqual(square_all([]), [])

    def test_case_3(self):
        self.assertEqual(square_all([1, -2]), [1, 4])


if __name__ == '__main__':
    unittest.main()
