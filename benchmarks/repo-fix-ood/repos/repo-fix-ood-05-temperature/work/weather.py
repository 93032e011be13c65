from convert import k_to_c


def report(kelvin):
    return f'{k_to_c(kelvin):.1f} C'
