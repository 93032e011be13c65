import unittest

from seq import last_n


class HiddenSeq(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(last_n([1, 2, 3, 4], 2), [3, 4])

    def test_case_2(self):
        self.assertEqual(last_n([1, 2, 3], 1), [3])

    def test_case_3(self):
        self.assertEqual(last_n([1, 2], 0), [])

    def test_case_4(self):
        self.assertEqual(last_n([5, 6, 7], 3), [5, 6, 7])


if __name__ == '__main__':
    unittest.main()
