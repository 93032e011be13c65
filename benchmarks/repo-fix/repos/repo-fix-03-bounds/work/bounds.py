def clamp(x, low, high):
    return min(low, max(x, high))
