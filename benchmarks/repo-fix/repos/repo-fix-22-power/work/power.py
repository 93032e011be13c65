def square_all(values):
    return [v * 2 for v in values]
