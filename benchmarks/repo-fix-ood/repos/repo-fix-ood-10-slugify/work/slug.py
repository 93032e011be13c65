def slug(title):
    return '-'.join(title.split())
