import pytest

from minicalc import cumulative_sum, moving_average


def test_cumulative_sum():
    assert cumulative_sum([1, 2, 3]) == [1, 3, 6]


def test_cumulative_sum_empty():
    assert cumulative_sum([]) == []


def test_moving_average():
    assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_moving_average_rejects_zero_window():
    with pytest.raises(ValueError):
        moving_average([1, 2], 0)
