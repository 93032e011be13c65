import unittest

from timeutil import to_minutes


class HiddenTimeutil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(to_minutes(2, 30), 150)

    def test_case_2(self):
        self.assertEqual(to_minutes(0, 45), 45)

    def test_case_3(self):
        self.assertEqual(to_minutes(1, 0), 60)


if __name__ == '__main__':
    unittest.main()
