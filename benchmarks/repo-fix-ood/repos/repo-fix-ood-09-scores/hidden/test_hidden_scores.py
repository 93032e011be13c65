import unittest

from summary import pass_count


class HiddenScores(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(pass_count([60, 59, 100]), 2)

    def test_case_2(self):
        self.assertEqual(pass_count([]), 0)

    def test_case_3(self):
        self.assertEqual(pass_count([61]), 1)


if __name__ == '__main__':
    unittest.main()
