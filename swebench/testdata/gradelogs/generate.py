"""Writes dataset.jsonl, expected.json and logs/ of this directory from the
real captures the repository holds (../../grade/testdata/logs, written by
../../logparse/testdata/capture.sh with real runners, and the Cypress capture
of ../../logparse/testdata/js). Run from this directory: python3 generate.py

Each capture is used twice: as captured (with the start and end markers) and
with the marker and exit-code lines removed, as harness 2.x wrote its logs,
which the official rewrite mode grades whole. The FAIL_TO_PASS and
PASS_TO_PASS lists are those of the grade package's golden scenarios, whose
verdicts that package checks against the official get_eval_report
(upstream_test.go); expected.json pins them under v5 rules.
"""
import json
import os

COMMIT = "0123456789abcdef0123456789abcdef01234567"
GRADE_LOGS = os.path.join("..", "..", "grade", "testdata", "logs")
JS_LOGS = os.path.join("..", "..", "logparse", "testdata", "js")

# (instance id, repo, version, log_parser, capture, FAIL_TO_PASS, PASS_TO_PASS, resolved)
ROWS = [
    ("astropy__astropy-90001", "astropy/astropy", "5.0", "", os.path.join(GRADE_LOGS, "pytest_color.v5.txt"),
     ["tests/test_stub.py::test_pass", "tests/test_stub.py::test_mouse[MouseButton.LEFT]"],
     ["tests/test_stub.py::TestGroup::test_method"], True),
    ("django__django-90002", "django/django", "3.0", "", os.path.join(GRADE_LOGS, "unittest_verbose.v5.txt"),
     ["test_ok (app.tests.ModelTests.test_ok)", "Docstring first line is the name Django tests get."],
     ["test_system_check (app.tests.InterruptedTests.test_system_check)", "test_skip (app.tests.ModelTests.test_skip)",
      "--version is equivalent to version", "test_no_migrations (app.tests.MigrationTests.test_no_migrations)"], True),
    ("django__django-90003", "django/django", "3.0", "", os.path.join(GRADE_LOGS, "unittest_verbose.v5.txt"),
     ["test_expected_failure (app.tests.ModelTests.test_expected_failure)"],
     ["test_fail (app.tests.ModelTests.test_fail)"], False),
    ("psf__requests-90004", "psf/requests", "2.0", "", os.path.join(GRADE_LOGS, "pytest_all_pass.v5.txt"),
     ["tests/sub/test_deep.py::test_numbers[0]"], ["tests/sub/test_deep.py::test_numbers[1]"], True),
    ("sympy__sympy-90005", "sympy/sympy", "1.12", "", os.path.join(GRADE_LOGS, "sympy_verbose.v5.txt"),
     ["test_structure", "test_printmethod"], ["test_lambdify_cse"], False),
    ("pytest-dev__pytest-90006", "pytest-dev/pytest", "5.4", "", os.path.join(GRADE_LOGS, "pytest_ra.v5.txt"),
     ["tests/test_stub.py::test_pass", "tests/test_stub.py::test_xfail"],
     ["tests/test_stub.py::TestGroup::test_method"], True),
    # A 5.0.2 row of Multimodal: next 1.27 runs Cypress (next_v2); without
    # the row's version the Karma parser reads nothing.
    ("alibaba-fusion__next-90007", "alibaba-fusion/next", "1.27", "next", os.path.join(JS_LOGS, "cypress_next.log"),
     ["Button: should render", "Button: should render loading"], ["Input: should focus"], True),
    ("alibaba-fusion__next-90008", "alibaba-fusion/next", "1.27", "next", os.path.join(JS_LOGS, "cypress_next.log"),
     ["Button: should be disabled"], ["Input: should focus"], False),
]

MARKER_LINES = (">>>>> Start Test Output", ">>>>> End Test Output", ">>>>> Test Exit Code", "+ SWEBOX=")


def strip_markers(text):
    return "".join(l for l in text.splitlines(keepends=True) if not any(m in l for m in MARKER_LINES))


def main():
    rows, expected = [], {}
    for iid, repo, version, parser, capture, f2p, p2p, resolved in ROWS:
        with open(capture, encoding="utf-8") as f:
            text = f.read()
        variants = [(iid, text)]
        if ">>>>> Start Test Output" in text:
            variants.append((iid + "1", strip_markers(text)))
        for vid, log in variants:
            row = {"repo": repo, "instance_id": vid, "base_commit": COMMIT, "patch": "", "test_patch": "",
                   "problem_statement": "", "hints_text": "", "created_at": "", "version": version,
                   "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p, "environment_setup_commit": COMMIT}
            if parser:
                row["log_parser"] = parser
            rows.append(row)
            with open(os.path.join("logs", vid + ".txt"), "w", encoding="utf-8") as f:
                f.write(log)
            expected[vid] = resolved
    with open("dataset.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    with open("expected.json", "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")


main()
