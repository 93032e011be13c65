import unittest

from games import fizzbuzz


class HiddenGames(unittest.TestCase):
    def test_case_1(self):
        self.assertEqual(fizzbuzz(15), 'FizzBuzz')

    def test_case_2(self):
        self.assertEqual(fizzbuzz(9), 'Fizz')

    def test_case_3(self):
        self.assertEqual(fizzbuzz(10), 'Buzz')

    def test_case_4(self):
        self.assertEqual(fizzbuzz(7), '7')

    def test_case_5(self):
        self.assertEqual(fizzbuzz(30), 'FizzBuzz')


if __name__ == '__main__':
    unittest.main()
