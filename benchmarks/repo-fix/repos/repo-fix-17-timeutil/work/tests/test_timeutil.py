import unittest

from timeutil import to_minutes


class TestTimeutil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(to_minutes(2, 30), 150)


if __name__ == '__main__':
    unittest.main()
