import unittest

from listing import stems


class HiddenPathsUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(stems(['b.txt', 'a.csv']), ['a', 'b'])

    def test_case_2(self):
        self.assertEqual(stems(['x.tar.gz']), ['x.tar'])

    def test_case_3(self):
        self.assertEqual(stems([]), [])


if __name__ == '__main__':
    unittest.main()
