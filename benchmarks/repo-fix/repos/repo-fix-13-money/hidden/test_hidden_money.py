import unittest

from money import apply_discount


class HiddenMoney(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(apply_discount(200, 10), 180)

    def test_case_2(self):
        self.assertEqual(apply_discount(50, 0), 50)

    def test_case_3(self):
        self.assertEqual(apply_discount(80, 25), 60)


if __name__ == '__main__':
    unittest.main()
