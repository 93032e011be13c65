import unittest

from stats import average


class TestStats(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(average([2, 4, 6]), 4)


if __name__ == '__main__':
    unittest.main()
