import unittest

from money import apply_discount


class TestMoney(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(apply_discount(200, 10), 180)


if __name__ == '__main__':
    unittest.main()
