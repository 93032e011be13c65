def zero_pad(number, width):
    return str(number).rjust(width, ' ')
