from rules import passed


def pass_count(scores):
    return sum(1 for s in scores if passed(s))
