import unittest

from text_tools import count_words


class HiddenTextTools(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_words('a  b'), 2)

    def test_case_2(self):
        self.assertEqual(count_words(''), 0)

    def test_case_3(self):
        self.assertEqual(count_words(' one two three '), 3)


if __name__ == '__main__':
    unittest.main()
