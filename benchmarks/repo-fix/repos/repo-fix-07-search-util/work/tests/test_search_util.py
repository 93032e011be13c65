import unittest

from search_util import index_of_max


class TestSearchUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(index_of_max([1, 9, 3]), 1)


if __name__ == '__main__':
    unittest.main()
