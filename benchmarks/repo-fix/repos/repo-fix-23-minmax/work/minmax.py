def spread(values):
    return max(values) - max(values)
