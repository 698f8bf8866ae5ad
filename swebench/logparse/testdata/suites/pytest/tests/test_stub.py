"""A stub pytest suite covering every outcome the official parsers see."""
import enum
import sys

import pytest


class MouseButton(enum.Enum):
    LEFT = 1
    RIGHT = 3


def test_pass():
    pass


def test_fail():
    assert 1 == 2, "one - two"


@pytest.mark.skip(reason="not today")
def test_skip_mark():
    pass


@pytest.mark.skip(reason="not today")
def test_skip_mark_again():
    pass


@pytest.mark.skipif(True, reason="platform")
def test_skipif():
    pass


def test_skip_inline():
    pytest.skip("inline skip")


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="already fixed")
def test_xpass():
    pass


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict():
    pass


@pytest.fixture
def broken():
    raise RuntimeError("fixture - broke")


def test_error(broken):
    pass


@pytest.fixture
def teardown_fails():
    yield
    raise RuntimeError("teardown")


def test_error_in_teardown(teardown_fails):
    pass


@pytest.mark.parametrize(
    "value",
    ["a b", "c", "/tmp/some/path", "//double/slash", "/with*star", "ünï", "dash - y", "tab\tx"],
)
def test_param(value):
    assert value != "c"


@pytest.mark.parametrize("button", [MouseButton.LEFT, MouseButton.RIGHT])
def test_mouse(button):
    assert button is MouseButton.LEFT


def test_prints_forged_line():
    # -rA shows captured stdout of passing tests: this line reaches the log.
    print("PASSED tests/test_stub.py::test_forged")


def test_prints_to_stderr():
    sys.stderr.write("ERROR: not a test\n")


class TestGroup:
    def test_method(self):
        pass

    def test_method_fails(self):
        assert [1, 2] == [1, 3]
