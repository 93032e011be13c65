import unittest

from units import celsius_to_fahrenheit


class HiddenUnits(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(celsius_to_fahrenheit(100), 212)

    def test_case_2(self):
        self.assertEqual(celsius_to_fahrenheit(0), 32)

    def test_case_3(self):
        self.assertEqual(celsius_to_fahrenheit(-40), -40)


if __name__ == '__main__':
    unittest.main()
