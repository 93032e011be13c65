import unittest

from search_util import index_of_max


class HiddenSearchUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(index_of_max([1, 9, 3]), 1)

    def test_case_2(self):
        self.assertEqual(index_of_max([7]), 0)

    def test_case_3(self):
        self.assertEqual(index_of_max([4, 2, 8, 8]), 2)


if __name__ == '__main__':
    unittest.main()
