import unittest

from slug import slug


class TestSlugify(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(slug('Hello World'), 'hello-world')


if __name__ == '__main__':
    unittest.main()
