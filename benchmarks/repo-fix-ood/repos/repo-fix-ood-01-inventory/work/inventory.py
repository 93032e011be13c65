from helpers import parse_qty


def stock(lines):
    return {name: parse_qty(qty) for name, qty in (line.split(':') for line in lines)}
