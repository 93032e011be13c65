import unittest

from geometry import rectangle_area


class TestGeometry(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(rectangle_area(3, 4), 12)


if __name__ == '__main__':
    unittest.main()
