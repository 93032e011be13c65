import unittest

from weather import report


class TestTemperature(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(report(273.15), '0.0 C')


if __name__ == '__main__':
    unittest.main()
