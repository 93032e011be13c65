def split_fields(line):
    return line.split(';')
