def apply_discount(price, percent):
    return price - percent / 100
