import unittest

from mathx import factorial


class TestMathx(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(factorial(5), 120)


if __name__ == '__main__':
    unittest.main()
