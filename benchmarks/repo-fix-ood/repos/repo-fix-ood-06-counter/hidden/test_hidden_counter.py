import unittest

from counter import Counter


class HiddenCounter(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda c: (c.add('x'), c.get('x'))[1])(Counter()), 1)

    def test_case_2(self):
        self.assertEqual((lambda c: (c.add('y'), c.add('y'), c.get('y'))[2])(Counter()), 2)

    def test_case_3(self):
        self.assertEqual(Counter().get('z'), 0)


if __name__ == '__main__':
    unittest.main()
