import unittest

from queue_util import Queue


class TestQueueUtil(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual((lambda q: (q.push(1), q.push(2), q.pop())[2])(Queue()), 1)


if __name__ == '__main__':
    unittest.main()
