import unittest

from seq import last_n


class TestSeq(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(last_n([1, 2, 3, 4], 2), [3, 4])


if __name__ == '__main__':
    unittest.main()
