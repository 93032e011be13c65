def k_to_c(kelvin):
    return kelvin + 273.15
