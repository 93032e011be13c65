import unittest

from weather import report


class HiddenTemperature(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(report(273.15), '0.0 C')

    def test_case_2(self):
        self.assertEqual(report(300), '26.9 C')

    def test_case_3(self):
        self.assertEqual(report(0), '-273.1 C')


if __name__ == '__main__':
    unittest.main()
