def inclusive_range(start, stop):
    return list(range(start, stop))
