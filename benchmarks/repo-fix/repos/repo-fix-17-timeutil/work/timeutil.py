def to_minutes(hours, minutes):
    return hours * 100 + minutes
