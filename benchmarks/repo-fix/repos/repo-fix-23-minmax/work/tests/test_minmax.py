import unittest

from minmax import spread


class TestMinmax(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(spread([3, 9, 4]), 6)


if __name__ == '__main__':
    unittest.main()
