import unittest

from minmax import spread


class HiddenMinmax(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(spread([3, 9, 4]), 6)

    def test_case_2(self):
        self.assertEqual(spread([5]), 0)

    def test_case_3(self):
        self.assertEqual(spread([-2, 2]), 4)


if __name__ == '__main__':
    unittest.main()
