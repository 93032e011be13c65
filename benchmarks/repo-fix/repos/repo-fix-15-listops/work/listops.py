def remove_duplicates(items):
    seen = []
    for item in items:
        if item in seen:
            seen.append(item)
    return seen
