def stem(filename):
    return filename.split('.')[-1]
