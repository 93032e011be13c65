def average(values):
    return sum(values) / (len(values) - 1)
