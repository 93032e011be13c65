import unittest

from stack_util import Stack


class TestStackUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda s: (s.push(1), s.push(2), s.peek())[2])(Stack()), 2)


if __name__ == '__main__':
    unittest.main()
