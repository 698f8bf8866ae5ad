"""Prints a test run in the format of sympy's bin/test -C --verbose.

It runs the small test functions below for real and reports them the way
sympy/testing/runtests.py (PyTestReporter) does: per file a header
"path[N] ", per test "\\nname " followed by ok / F / E / f / X / "reason s",
the file verdict [OK] / [FAIL] right-aligned to 80 columns, then a centred
"___ path:test ___" header per failure and exception and the totals line.
"""
import sys
import traceback

WIDTH = 80
out = sys.stdout
column = 0


def write(text):
    global column
    out.write(text)
    if "\n" in text:
        column = len(text) - text.rindex("\n") - 1
    else:
        column += len(text)


def write_right(text):
    write(" " * max(WIDTH - column - len(text), 0) + text)


def write_center(text, delim):
    if text:
        text = " %s " % text
    idx = (WIDTH - len(text)) // 2
    write(delim * idx + text + delim * (WIDTH - idx - len(text)) + "\n")


class Skip(Exception):
    pass


def XFAIL(f):
    f.xfail = True
    return f


# sympy/core/tests/test_basic.py
def test_structure():
    assert (1, 2) == (1, 2)


def test_equality():
    assert 1 + 1 == 3


def test_immutable():
    raise TypeError("immutable")


@XFAIL
def test_known_bug():
    assert False


@XFAIL
def test_fixed_bug():
    pass


def test_numpy_printing():
    raise Skip("numpy not installed")


# sympy/printing/tests/test_pycode.py
def test_printmethod():
    pass


def test_lambdify_cse():
    pass


FILES = [
    ("sympy/core/tests/test_basic.py",
     [test_structure, test_equality, test_immutable, test_known_bug, test_fixed_bug, test_numpy_printing]),
    ("sympy/printing/tests/test_pycode.py", [test_printmethod, test_lambdify_cse]),
]


def main():
    write_center("test process starts", "=")
    write("executable:         /usr/bin/python3  (3.11.2-final-0) [CPython]\n")
    write("architecture:       64-bit\n")
    write("cache:              no\n")
    write("ground types:       python \n")
    write("numpy:              None\n")
    write("random seed:        86012431\n")
    write("hash randomization: on (PYTHONHASHSEED=2151475473)\n\n")
    passed, xfailed, xpassed, skipped = 0, 0, 0, 0
    failures, exceptions = [], []
    for path, tests in FILES:
        write("%s[%d] " % (path, len(tests)))
        file_failed = False
        for f in tests:
            write("\n" + f.__name__ + " ")
            try:
                f()
            except Skip as e:
                skipped += 1
                write(str(e) + " s")
                continue
            except AssertionError:
                if getattr(f, "xfail", False):
                    xfailed += 1
                    write("f")
                    continue
                failures.append((path, f, sys.exc_info()))
                file_failed = True
                write("F")
                continue
            except Exception:
                exceptions.append((path, f, sys.exc_info()))
                file_failed = True
                write("E")
                continue
            if getattr(f, "xfail", False):
                xpassed += 1
                write("X")
                continue
            passed += 1
            write("ok")
        write(" ")
        write_right("[FAIL]" if file_failed else "[OK]")
        write("\n\n")
    write("\n")
    for path, f, (t, v, tb) in exceptions + failures:
        write_center("", "_")
        write_center("%s:%s" % (path, f.__name__), "_")
        write("".join(traceback.format_exception(t, v, tb)).replace(__file__, "/testbed/" + path))
        write("\n")
    write(" tests finished: %d passed, %d failed, %d skipped, %d expected to fail, "
          "%d expected to fail but passed, %d exceptions, in 0.05 seconds \n"
          % (passed, len(failures), skipped, xfailed, xpassed, len(exceptions)))
    write("DO *NOT* COMMIT!\n")
    return 1 if failures or exceptions else 0


if __name__ == "__main__":
    sys.exit(main())
