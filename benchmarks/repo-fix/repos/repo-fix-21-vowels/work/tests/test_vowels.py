import unittest

from vowels import count_vowels


class TestVowels(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_vowels('Apple'), 2)


if __name__ == '__main__':
    unittest.main()
