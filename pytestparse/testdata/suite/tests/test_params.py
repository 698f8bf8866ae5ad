"""Parametrized ids with every awkward character a log parser can trip over."""
import pytest

AWKWARD = [
    "a b",
    "a - b",
    "x::y",
    "[x]",
    "a]b",
    "[100%]",
    "x PASSED y",
    "PASSED",
    " FAILED [ 50%]",
    "x (y)",
    "a <- b.py",
    "café",
    "日本語",
    "tab\there",
    "",
    "trailing ",
    "- dash",
]


@pytest.mark.parametrize("value", AWKWARD, ids=AWKWARD)
def test_awkward_pass(value):
    assert isinstance(value, str)


@pytest.mark.parametrize("value", ["a - b", "x] - [y", "FAILED"], ids=["a - b", "x] - [y", "FAILED"])
def test_awkward_fail(value):
    assert value == "something else"


@pytest.mark.parametrize("value", ["a - b", "[50%]"], ids=["a - b", "[50%]"])
def test_awkward_skip(value):
    pytest.skip(f"skip {value} (because) PASSED")


@pytest.mark.parametrize("value", ["a - b"], ids=["a - b"])
@pytest.mark.xfail(reason="xfail - with dash")
def test_awkward_xfail(value):
    assert False


@pytest.mark.parametrize("value", ["a - b"], ids=["a - b"])
@pytest.mark.xfail(reason="xpass - with dash")
def test_awkward_xpass(value):
    pass


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])
def test_pairs(a, b):
    assert a < b


def test_ünïcödé_name():
    pass


@pytest.mark.parametrize(
    "value",
    ["a-very-long-parameter-id-that-pushes-the-line-past-the-terminal-width-of-eighty-columns"],
)
def test_long_id_fails(value):
    assert value == "short", "message that no longer fits on the summary line"
