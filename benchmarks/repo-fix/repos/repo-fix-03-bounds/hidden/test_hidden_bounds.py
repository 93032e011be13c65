import unittest

from bounds import clamp


class HiddenBounds(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(clamp(5, 0, 10), 5)

    def test_case_2(self):
        self.assertEqual(clamp(-3, 0, 10), 0)

    def test_case_3(self):
        self.assertEqual(clamp(42, 0, 10), 10)

    def test_case_4(self):
        self.assertEqual(clamp(0, 0, 0), 0)


if __name__ == '__main__':
    unittest.main()
