"""minicalc: a tiny numeric helper library."""

from minicalc.numbers import clamp, parse_number
from minicalc.series import cumulative_sum, moving_average
from minicalc.stats import mean, median

__all__ = ["clamp", "cumulative_sum", "mean", "median", "moving_average", "parse_number"]
__version__ = "0.2.0"
