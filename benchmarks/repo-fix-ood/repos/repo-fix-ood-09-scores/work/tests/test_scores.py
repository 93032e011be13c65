import unittest

from summary import pass_count


class TestScores(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(pass_count([60, 59, 100]), 2)


if __name__ == '__main__':
    unittest.main()
