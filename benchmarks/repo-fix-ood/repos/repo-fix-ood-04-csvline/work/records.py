from fields import split_fields


def record(line):
    name, age = split_fields(line)
    return {'name': name.strip(), 'age': int(age)}
