import pytest


@pytest.mark.parametrize("n", range(3))
def test_numbers(n):
    assert n < 2


def test_long_message():
    raise ValueError("line one\nline two - with dash")
