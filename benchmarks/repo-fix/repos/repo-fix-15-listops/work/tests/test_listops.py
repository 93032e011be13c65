import unittest

from listops import remove_duplicates


class TestListops(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(remove_duplicates([1, 1, 2]), [1, 2])


if __name__ == '__main__':
    unittest.main()
