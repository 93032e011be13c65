def count_even(numbers):
    return sum(1 for n in numbers if n % 2 == 1)
