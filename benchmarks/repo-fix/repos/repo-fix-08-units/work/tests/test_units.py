import unittest

from units import celsius_to_fahrenheit


class TestUnits(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(celsius_to_fahrenheit(100), 212)


if __name__ == '__main__':
    unittest.main()
