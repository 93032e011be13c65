import unittest

from padding import zero_pad


class TestPadding(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(zero_pad(7, 3), '007')


if __name__ == '__main__':
    unittest.main()
