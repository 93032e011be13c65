def last_n(items, n):
    return items[-n - 1:]
