from names import stem


def stems(files):
    return sorted(stem(f) for f in files)
