import unittest

from stack_util import Stack


class HiddenStackUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda s: (s.push(1), s.push(2), s.peek())[2])(Stack()), 2)

    def test_case_2(self):
        self.assertEqual((lambda s: (s.push('a'), s.peek())[1])(Stack()), 'a')


if __name__ == '__main__':
    unittest.main()
