"""minicalc: a tiny numeric helper library."""

from minicalc.numbers import clamp, parse_number
from minicalc.stats import mean, median

__all__ = ["clamp", "mean", "median", "parse_number"]
__version__ = "0.1.0"
