import pytest

from minicalc import clamp, parse_number


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_below_and_above():
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10


def test_parse_int_stays_int():
    value = parse_number(" 42 ")
    assert value == 42
    assert isinstance(value, int)


def test_parse_float():
    assert parse_number("2.5") == 2.5
    assert parse_number("1e3") == 1000.0


def test_parse_rejects_words():
    with pytest.raises(ValueError):
        parse_number("forty-two")
