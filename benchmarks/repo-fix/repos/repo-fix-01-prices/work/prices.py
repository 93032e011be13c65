def total(prices):
    result = 0
    for i in range(1, len(prices)):
        result += prices[i]
    return result
