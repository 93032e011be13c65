import unittest

from padding import zero_pad


class HiddenPadding(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(zero_pad(7, 3), '007')

    def test_case_2(self):
        self.assertEqual(zero_pad(123, 2), '123')

    def test_case_3(self):
        self.assertEqual(zero_pad(0, 1), '0')


if __name__ == '__main__':
    unittest.main()
