import unittest

from geometry import rectangle_area


class HiddenGeometry(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(rectangle_area(3, 4), 12)

    def test_case_2(self):
        self.assertEqual(rectangle_area(0, 9), 0)

    def test_case_3(self):
        self.assertEqual(rectangle_area(5, 5), 25)


if __name__ == '__main__':
    unittest.main()
