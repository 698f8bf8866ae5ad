"""Helpers for single numbers."""


def clamp(value, lo, hi):
    """Return value limited to the range [lo, hi]."""
    return max(lo, min(value, hi))


def parse_number(text):
    """Parse an int or a float from text, ignoring surrounding whitespace."""
    text = text.strip()
    if "." in text or "e" in text.lower():
        return float(text)
    return int(text)
