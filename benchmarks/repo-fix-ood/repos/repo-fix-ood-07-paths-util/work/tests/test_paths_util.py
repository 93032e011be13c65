import unittest

from listing import stems


class TestPathsUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(stems(['b.txt', 'a.csv']), ['a', 'b'])


if __name__ == '__main__':
    unittest.main()
