import unittest

from words import reverse_words


class HiddenWords(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(reverse_words('hello world'), 'world hello')

    def test_case_2(self):
        self.assertEqual(reverse_words('a b c'), 'c b a')

    def test_case_3(self):
        self.assertEqual(reverse_words('solo'), 'solo')


if __name__ == '__main__':
    unittest.main()
