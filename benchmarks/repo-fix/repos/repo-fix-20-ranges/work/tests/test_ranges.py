import unittest

from ranges import inclusive_range


class TestRanges(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(inclusive_range(1, 3), [1, 2, 3])


if __name__ == '__main__':
    unittest.main()
