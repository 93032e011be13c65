import unittest

from mathx import factorial


class HiddenMathx(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(factorial(5), 120)

    def test_case_2(self):
        self.assertEqual(factorial(0), 1)

    def test_case_3(self):
        self.assertEqual(factorial(1), 1)

    def test_case_4(self):
        self.assertEqual(factorial(6), 720)


if __name__ == '__main__':
    unittest.main()
