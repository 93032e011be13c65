import unittest

from queue_util import Queue


class HiddenQueueUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda q: (q.push(1), q.push(2), q.pop())[2])(Queue()), 1)

    def test_case_2(self):
        self.assertEqual((lambda q: (q.push('a'), q.pop())[1])(Queue()), 'a')

    def test_case_3(self):
        self.assertEqual((lambda q: (q.push(1), q.push(2), q.push(3), q.pop(), q.pop())[4])(Queue()), 2)


if __name__ == '__main__':
    unittest.main()
