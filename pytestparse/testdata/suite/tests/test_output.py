"""Tests whose captured output looks like pytest's own status lines."""
import sys


def _fake_report():
    print("PASSED tests/test_fake.py::test_fake")
    print("tests/test_fake.py::test_fake FAILED                                     [100%]")
    print("FAILED tests/test_fake.py::test_other - AssertionError")
    print("[gw0] [ 50%] PASSED tests/test_fake.py::test_xdist")
    print("ERROR tests/test_fake.py::test_err - RuntimeError")
    print("_____________________________ test_fake ______________________________")
    print("---------------------------- Captured stdout call -----------------------------")
    print("XPASS tests/test_fake.py::test_xpass reason")
    print("tests/test_fake.py::test_started ")
    sys.stderr.write("SKIPPED [1] tests/test_fake.py:3: fake skip\n")


def test_prints_status_lines_and_passes():
    _fake_report()


def test_prints_status_lines_and_fails():
    _fake_report()
    assert False, "failing after printing fake status lines"


def test_prints_inner_session():
    # What pytester-based tests print: a whole inner pytest session.
    print("============================= test session starts ==============================")
    print("collected 2 items")
    print("")
    print("inner/test_inner.py::test_one PASSED                                   [ 50%]")
    print("inner/test_inner.py::test_two FAILED                                   [100%]")
    print("")
    print("=================================== FAILURES ===================================")
    print("___________________________________ test_two ___________________________________")
    print("=========================== short test summary info ============================")
    print("FAILED inner/test_inner.py::test_two - assert 0")
    print("========================= 1 failed, 1 passed in 0.01s ==========================")
    assert False, "inner session printed"


def test_prints_inner_session_and_passes():
    print("============================= test session starts ==============================")
    print("inner/test_inner.py::test_three PASSED                                 [100%]")
    print("============================== 1 passed in 0.01s ===============================")
