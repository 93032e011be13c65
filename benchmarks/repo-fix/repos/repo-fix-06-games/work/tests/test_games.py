import unittest

from games import fizzbuzz


class TestGames(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(fizzbuzz(15), 'FizzBuzz')


if __name__ == '__main__':
    unittest.main()
