import unittest

from vowels import count_vowels


class HiddenVowels(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_vowels('Apple'), 2)

    def test_case_2(self):
        self.assertEqual(count_vowels(''), 0)

    def test_case_3(self):
        self.assertEqual(count_vowels('SKY'), 0)

    def test_case_4(self):
        self.assertEqual(count_vowels('EAU'), 3)


if __name__ == '__main__':
    unittest.main()
