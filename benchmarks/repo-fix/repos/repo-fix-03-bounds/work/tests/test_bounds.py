import unittest

from bounds import clamp


class TestBounds(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(clamp(5, 0, 10), 5)


if __name__ == '__main__':
    unittest.main()
