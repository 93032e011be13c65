import unittest

from listops import remove_duplicates


class HiddenListops(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(remove_duplicates([1, 1, 2]), [1, 2])

    def test_case_2(self):
        self.assertEqual(remove_duplicates([]), [])

    def test_case_3(self):
        self.assertEqual(remove_duplicates([3, 2, 3, 1, 2]), [3, 2, 1])


if __name__ == '__main__':
    unittest.main()
