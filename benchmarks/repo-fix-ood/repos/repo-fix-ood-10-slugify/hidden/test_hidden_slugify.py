import unittest

from slug import slug


class HiddenSlugify(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(slug('Hello World'), 'hello-world')

    def test_case_2(self):
        self.assertEqual(slug('  A  B '), 'a-b')

    def test_case_3(self):
        self.assertEqual(slug('x'), 'x')


if __name__ == '__main__':
    unittest.main()
