PASS_MARK = 60


def passed(score):
    return score > PASS_MARK
