import unittest

from words import reverse_words


class TestWords(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(reverse_words('hello world'), 'world hello')


if __name__ == '__main__':
    unittest.main()
