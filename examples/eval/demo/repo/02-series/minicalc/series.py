"""Running computations over sequences of numbers."""


def cumulative_sum(values):
    """Return the running totals of values."""
    total = 0
    out = []
    for value in values:
        total += value
        out.append(total)
    return out


def moving_average(values, window):
    """Return the averages of each run of window consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    values = list(values)
    out = []
    i = 0
    while i + window <= len(values):
        out.append(sum(values[i : i + window]) / window)
        i += 1
    return out
