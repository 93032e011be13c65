import unittest

from text_tools import count_words


class TestTextTools(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(count_words('a  b'), 2)


if __name__ == '__main__':
    unittest.main()
