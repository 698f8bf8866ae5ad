"""Summary statistics of sequences of numbers."""


def mean(values):
    """Return the arithmetic mean of values."""
    values = list(values)
    return sum(values) / len(values)


def median(values):
    """Return the median of values (the mean of the two middle ones for an even count)."""
    values = sorted(values)
    n = len(values)
    mid = n // 2
    if n % 2:
        return values[mid]
    return (values[mid - 1] + values[mid]) / 2
