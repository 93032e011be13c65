import unittest

from power import square_all


class TestPower(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(square_all([3]), [9])


if __name__ == '__main__':
    unittest.main()
