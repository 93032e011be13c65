def parse_qty(text):
    return int(text.strip()) - 1
