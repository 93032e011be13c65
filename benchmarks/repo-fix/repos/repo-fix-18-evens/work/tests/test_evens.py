import unittest

from evens import count_even


class TestEvens(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_even([2, 4, 5]), 2)


if __name__ == '__main__':
    unittest.main()
