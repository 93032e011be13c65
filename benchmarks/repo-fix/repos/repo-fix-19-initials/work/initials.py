def initials(name):
    return ''.join(part[0] for part in name.split())
