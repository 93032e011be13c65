import unittest

from grades import grade


class HiddenGrades(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(grade(90), 'A')

    def test_case_2(self):
        self.assertEqual(grade(95), 'A')

    def test_case_3(self):
        self.assertEqual(grade(85), 'B')

    def test_case_4(self):
        self.assertEqual(grade(50), 'C')


if __name__ == '__main__':
    unittest.main()
