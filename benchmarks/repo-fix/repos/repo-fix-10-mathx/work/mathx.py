def factorial(n):
    result = 1
    for k in range(1, n):
        result *= k
    return result
