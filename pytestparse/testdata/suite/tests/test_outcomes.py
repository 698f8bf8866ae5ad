"""Every outcome pytest can report, including the awkward phase combinations."""
import warnings

import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup exploded")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown exploded")


def test_pass():
    assert True


def test_fail():
    assert 1 + 1 == 3, "arithmetic is broken"


def test_setup_error(broken_setup):
    pass


def test_teardown_error_after_pass(broken_teardown):
    pass


def test_teardown_error_after_fail(broken_teardown):
    assert False, "body failed too"


@pytest.mark.skip(reason="not today")
def test_skip_marker():
    pass


def test_skip_inline():
    pytest.skip("skipped from inside: PASSED [ 50%]")


@pytest.mark.skipif(True, reason="condition (always true)")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed by accident")
def test_xpass():
    pass


@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass


@pytest.mark.xfail(raises=ValueError, reason="only ValueError is expected")
def test_xfail_wrong_exception():
    raise TypeError("not a ValueError")


def test_xfail_inline():
    pytest.xfail("decided at runtime")


def test_warns():
    warnings.warn("careful - this is a warning", UserWarning)


def test_deselect_me():
    pass


class TestGroup:
    def test_method_pass(self):
        pass

    def test_method_fail(self):
        assert [1, 2] == [1, 3]

    @pytest.mark.parametrize("n", [1, 2])
    def test_method_param(self, n):
        assert n


def test_multiline_message():
    raise AssertionError("first line\nsecond line\nthird line")
