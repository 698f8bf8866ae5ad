# Fixture rows and logs in SWE-Gym's format: rows as SWE-Gym/SWE-Gym spells
# them (FAIL_TO_PASS and PASS_TO_PASS lists, some as JSON strings, instance
# ids in the repository's own letter case), logs as its fork of the harness
# (SWE-bench 2.0.13) writes test_output.txt: eval.sh traced by set -x, no
# start or end marker, the test patch's "Applied patch ... cleanly." line.
import json

BASE = "0123abcd0123abcd0123abcd0123abcd0123abcd"

def patch(*files, new=(), extra=""):
    p = ""
    for f in files:
        p += f"diff --git a/{f} b/{f}\nindex 1111111..2222222 100644\n--- a/{f}\n+++ b/{f}\n@@ -1,1 +1,2 @@\n x\n+y\n"
    for f in new:
        p += f"diff --git a/{f} b/{f}\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/{f}\n@@ -0,0 +1,1 @@\n+y\n"
    return p + extra

def log(cmd, *lines, applied=True, files=("tests/test_x.py",), before=()):
    out = ["+ source /opt/miniconda3/bin/activate", "++ _CONDA_ROOT=/opt/miniconda3", "+ conda activate testbed",
           "+ cd /testbed", "+ git status", "On branch main", "nothing to commit, working tree clean",
           "+ git show", "commit " + BASE, "+ git diff " + BASE]
    out += list(before)
    out += ["+ git checkout " + BASE + " " + " ".join(files), "Updated 0 paths from 0123abc", "+ git apply -v -"]
    for f in files:
        out.append(f"Checking patch {f}...")
        out.append(f"Applied patch {f} cleanly." if applied else f"error: while searching for:\nerror: patch failed: {f}:1\nerror: {f}: patch does not apply")
    if applied:
        out += ["+ " + cmd, "============================= test session starts =============================="]
        out += list(lines)
    out += ["+ git checkout " + BASE + " " + " ".join(files), "Updated 1 path from 0123abc"]
    return "\n".join(out) + "\n"

MOTO = "pytest -n0 -rA"
T = "tests/test_x.py"
rows = [
 # getmoto/moto: all pass, lists as lists
 ("getmoto__moto-5865", "getmoto/moto", "4.1", patch("tests/test_ec2/test_x.py"),
  ["tests/test_ec2/test_x.py::test_a"], ["tests/test_ec2/test_x.py::test_b"],
  log(MOTO + " tests/test_ec2/test_x.py", "PASSED tests/test_ec2/test_x.py::test_a", "PASSED tests/test_ec2/test_x.py::test_b",
      files=("tests/test_ec2/test_x.py",))),
 # a failing FAIL_TO_PASS test
 ("getmoto__moto-5866", "getmoto/moto", "4.1", patch("tests/test_ec2/test_x.py"),
  ["tests/test_ec2/test_x.py::test_a"], ["tests/test_ec2/test_x.py::test_b"],
  log(MOTO + " tests/test_ec2/test_x.py", "FAILED tests/test_ec2/test_x.py::test_a - AssertionError: x", "PASSED tests/test_ec2/test_x.py::test_b",
      files=("tests/test_ec2/test_x.py",))),
 # Project-MONAI: a missing PASS_TO_PASS test fails; the parser is found by the lower-cased id
 ("Project-MONAI__MONAI-3403", "Project-MONAI/MONAI", "0.8", patch("tests/test_x.py"),
  ["tests/test_x.py::TestX::test_a"], ["tests/test_x.py::TestX::test_b", "tests/test_x.py::TestX::gone"],
  log("pytest -rA  tests/test_x.py", "PASSED tests/test_x.py::TestX::test_a", "PASSED tests/test_x.py::TestX::test_b")),
 # python/mypy: the test command from the [case X] names; passes
 ("python__mypy-10430", "python/mypy", "0.920",
  patch("test-data/unit/check-classes.test", extra="") .replace("+y\n", "+[case testFooBar]\n+[case testBaz_python2]\n"),
  ["mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFooBar"],
  ["mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBaz_python2"],
  log('pytest -n0 -rA -k "testFooBar or testBaz_python2"',
      "PASSED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFooBar",
      "PASSED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBaz_python2", files=("test-data/unit/check-classes.test",))),
 # mypy 1.10: the other table entry; a FAIL_TO_PASS case fails
 ("python__mypy-17071", "python/mypy", "1.10", patch("test-data/unit/check-x.test").replace("+y\n", "+[case testOne]\n"),
  ["mypy/test/testcheck.py::TypeCheckSuite::check-x.test::testOne"], [],
  log('pytest -rA -k "testOne"', "FAILED mypy/test/testcheck.py::TypeCheckSuite::check-x.test::testOne", files=("test-data/unit/check-x.test",))),
 # pydantic: parse_log_pytest_pydantic, "-vv -o console_output_style=classic" lines ending in the status;
 # "FAILED [ 50%]" loses its bracket
 ("pydantic__pydantic-8004", "pydantic/pydantic", "2.6", patch("tests/test_main.py"),
  ["tests/test_main.py::test_a", "tests/test_main.py::test_c"], ["tests/test_main.py::test_b"],
  log("pytest -rA --tb=short -vv -o console_output_style=classic --no-header tests/test_main.py",
      "tests/test_main.py::test_a PASSED", "tests/test_main.py::test_b \x1b[32mPASSED\x1b[0m", "tests/test_main.py::test_c FAILED [ 66%]",
      files=("tests/test_main.py",))),
 # pydantic: all pass, summary lines
 ("pydantic__pydantic-8005", "pydantic/pydantic", "2.6", patch("tests/test_main.py"),
  ["tests/test_main.py::test_a"], ["tests/test_main.py::test_b"],
  log("pytest -rA --tb=short -vv -o console_output_style=classic --no-header tests/test_main.py",
      "tests/test_main.py::test_a PASSED", "PASSED tests/test_main.py::test_b", files=("tests/test_main.py",))),
 # pydantic's parser raises on a line of one status word (IndexError): no report
 ("pydantic__pydantic-8006", "pydantic/pydantic", "2.7", patch("tests/test_main.py"),
  ["tests/test_main.py::test_a"], [],
  log("pytest -rA tests/test_main.py", "tests/test_main.py::test_a PASSED", "PASSED", files=("tests/test_main.py",))),
 # dask: the test patch does not apply: no "applied patch", unusable
 ("dask__dask-10042", "dask/dask", "2023.3", patch("dask/tests/test_x.py"),
  ["dask/tests/test_x.py::test_a"], [],
  log("pytest -n0 -rA  --color=no dask/tests/test_x.py", applied=False, files=("dask/tests/test_x.py",))),
 # conan: eval_commands; a timeout marker anywhere makes the log unusable
 ("conan-io__conan-13610", "conan-io/conan", "2.0", patch("conans/test/unittests/test_x.py"),
  ["conans/test/unittests/test_x.py::test_a"], [],
  log("pytest -n0 -rA conans/test/unittests/test_x.py", "PASSED conans/test/unittests/test_x.py::test_a", ">>>>> Tests Timed Out",
      files=("conans/test/unittests/test_x.py",))),
 # iterative/dvc: the whole log is parsed: a FAILED line printed by the install step marks the test failed
 # (a start/end-marker harness would not see it), and the later PASSED line wins again
 ("iterative__dvc-9000", "iterative/dvc", "2.50", patch("tests/func/test_x.py"),
  ["tests/func/test_x.py::test_a"], ["tests/func/test_x.py::test_b"],
  log("pytest -rA tests/func/test_x.py", "PASSED tests/func/test_x.py::test_a",
      before=("+ python -m pip install -e .", "FAILED tests/func/test_x.py::test_b - from an old run"), files=("tests/func/test_x.py",))),
 # dvc 0.x: its version group; ">>>>> Applied Patch (pred)" cuts the log
 ("iterative__dvc-1000", "iterative/dvc", "0.30", patch("tests/test_x.py"),
  ["tests/test_x.py::test_a"], [],
  log("pytest -rA tests/test_x.py", "PASSED tests/test_x.py::test_a",
      before=("FAILED tests/test_x.py::test_a", ">>>>> Applied Patch (pred)"))),
 # hypothesis: XFAIL is a pass, a SKIPPED FAIL_TO_PASS test is neither success nor failure
 ("HypothesisWorks__hypothesis-3700", "HypothesisWorks/hypothesis", "6.100", patch("hypothesis-python/tests/cover/test_x.py"),
  ["hypothesis-python/tests/cover/test_x.py::test_a", "hypothesis-python/tests/cover/test_x.py::test_s"],
  ["hypothesis-python/tests/cover/test_x.py::test_b"],
  log("pytest -n0 -rA --tb=no --no-header hypothesis-python/tests/cover/test_x.py",
      "PASSED hypothesis-python/tests/cover/test_x.py::test_a", "SKIPPED hypothesis-python/tests/cover/test_x.py::test_s",
      "XFAIL hypothesis-python/tests/cover/test_x.py::test_b - reason", files=("hypothesis-python/tests/cover/test_x.py",))),
 # modin: an ERROR in PASS_TO_PASS
 ("modin-project__modin-6800", "modin-project/modin", "0.25", patch("modin/tests/test_x.py"),
  ["modin/tests/test_x.py::test_a"], ["modin/tests/test_x.py::test_b"],
  log("pytest -n0 -rA modin/tests/test_x.py", "PASSED modin/tests/test_x.py::test_a", "ERROR modin/tests/test_x.py::test_b - Exception",
      files=("modin/tests/test_x.py",))),
 # bokeh: coloured status words are not parsed by parse_log_pytest: the tests are missing
 ("bokeh__bokeh-13000", "bokeh/bokeh", "3.3", patch("tests/unit/bokeh/test_x.py"),
  ["tests/unit/bokeh/test_x.py::test_a"], [],
  log("pytest -rA -n0 tests/unit/bokeh/test_x.py", "\x1b[32mPASSED\x1b[0m tests/unit/bokeh/test_x.py::test_a",
      files=("tests/unit/bokeh/test_x.py",))),
 # pandas: non-test files (yml, csv without a dot) are no directives; a new file is no test file to reset
 ("pandas-dev__pandas-53000", "pandas-dev/pandas", "2.1",
  patch("pandas/tests/io/test_x.py", "ci/deps.yml", new=("pandas/tests/io/data/tips_csv", "pandas/tests/io/test_new.py")),
  ["pandas/tests/io/test_new.py::test_a"], ["pandas/tests/io/test_x.py::test_b"],
  log("pytest -rA --tb=long pandas/tests/io/test_x.py pandas/tests/io/test_new.py", "PASSED pandas/tests/io/test_new.py::test_a",
      "PASSED pandas/tests/io/test_x.py::test_b", files=("pandas/tests/io/test_x.py", "ci/deps.yml"))),
 # hydra: only a new test file: "git checkout <base> " with nothing after it
 ("facebookresearch__hydra-1900", "facebookresearch/hydra", "1.2", patch(new=("tests/test_new.py",)),
  ["tests/test_new.py::test_a"], [],
  log("pytest -rA --tb=long tests/test_new.py", "PASSED tests/test_new.py::test_a", files=("tests/test_new.py",))),
]

import os
os.makedirs("logs", exist_ok=True)
with open("rows.jsonl", "w") as f:
    for i, (iid, repo, version, tp, f2p, p2p, text) in enumerate(rows):
        as_str = i % 2 == 1  # half the rows carry the lists as JSON strings, as some exports do
        row = {"instance_id": iid, "repo": repo, "base_commit": BASE, "patch": "", "test_patch": tp,
               "problem_statement": "", "hints_text": "", "created_at": "2024-01-01T00:00:00Z", "version": version,
               "FAIL_TO_PASS": json.dumps(f2p) if as_str else f2p, "PASS_TO_PASS": json.dumps(p2p) if as_str else p2p,
               "environment_setup_commit": BASE}
        f.write(json.dumps(row) + "\n")
        with open(os.path.join("logs", iid + ".log"), "w") as lf:
            lf.write(text)
print(len(rows), "rows")
