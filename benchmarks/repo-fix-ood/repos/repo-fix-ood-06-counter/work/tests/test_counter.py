import unittest

from counter import Counter


class TestCounter(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda c: (c.add('x'), c.get('x'))[1])(Counter()), 1)


if __name__ == '__main__':
    unittest.main()
