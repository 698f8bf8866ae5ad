# Fixture rows and logs in SWE-bench-Live's format (rows as its Hub rows
# spell them; logs as pytest -rA prints them, which Live's pytest rows run).
import json
P = "PASSED"
def log(*lines): return "\n".join(lines) + "\n"
rows = [
 ("pvlib__pvlib-python-2001", ["t.py::test_a"], ["t.py::test_b", "t.py::test_c"],
  log("===== short test summary info =====", "PASSED t.py::test_a", "PASSED t.py::test_b", "PASSED t.py::test_c")),
 ("pvlib__pvlib-python-2002", ["t.py::test_a"], ["t.py::test_b"],
  log("FAILED t.py::test_a - AssertionError: boom", "PASSED t.py::test_b")),
 # a PASS_TO_PASS test missing from the log counts neither way
 ("conan-io__conan-3", ["t.py::test_a"], ["t.py::test_b", "t.py::gone"],
  log("PASSED t.py::test_a", "PASSED t.py::test_b")),
 # a FAIL_TO_PASS test missing: not every one passed
 ("conan-io__conan-4", ["t.py::test_a", "t.py::gone"], ["t.py::test_b"],
  log("PASSED t.py::test_a", "PASSED t.py::test_b")),
 # skipped PASS_TO_PASS: neither; skipped FAIL_TO_PASS: not passed
 ("kedro-org__kedro-5", ["t.py::test_a"], ["t.py::test_s"],
  log("PASSED t.py::test_a", "SKIPPED t.py::test_s")),
 ("kedro-org__kedro-6", ["t.py::test_s"], [],
  log("SKIPPED t.py::test_s")),
 # XFAIL is a failure to Live's pytest parser
 ("kedro-org__kedro-7", ["t.py::test_x"], ["t.py::test_b"],
  log("XFAIL t.py::test_x - reason", "PASSED t.py::test_b")),
 ("kedro-org__kedro-8", ["t.py::test_a"], ["t.py::test_e"],
  log("PASSED t.py::test_a", "ERROR t.py::test_e - fixture")),
 # no FAIL_TO_PASS: resolved unless a PASS_TO_PASS test fails
 ("aws-cloudformation__cfn-lint-9", [], ["t.py::test_b"],
  log("PASSED t.py::test_b")),
 ("aws-cloudformation__cfn-lint-10", [], [],
  log("nothing ran")),
 # parametrized ids with spaces are cut at the first space by the parser
 ("aws-cloudformation__cfn-lint-11", ["t.py::test_p[a b]"], [],
  log("PASSED t.py::test_p[a b]")),
 ("aws-cloudformation__cfn-lint-12", ["t.py::test_p[a"], ["t.py::test_q[1]"],
  log("PASSED t.py::test_p[a b]", "FAILED t.py::test_q[1] - x - y")),
 # duplicates in the lists count once
 ("python-attrs__attrs-13", ["t.py::test_a", "t.py::test_a"], ["t.py::test_b"],
  log("PASSED t.py::test_a", "PASSED t.py::test_b")),
 # the SKIPPED [N] summary form and a line with nothing after the status
 ("python-attrs__attrs-14", ["t.py::test_a"], ["[1]"],
  log("SKIPPED [1] t.py:3: no", "PASSED", "PASSED t.py::test_a")),
 # a test that passes and fails (the later line wins)
 ("python-attrs__attrs-15", ["t.py::test_a"], [],
  log("FAILED t.py::test_a", "PASSED t.py::test_a")),
]
with open("rows.jsonl", "w") as f:
    for iid, f2p, p2p, text in rows:
        row = {"repo": iid.split("__")[0] + "/" + iid.split("__")[1].rsplit("-", 1)[0], "instance_id": iid,
               "base_commit": "0123abcd", "patch": "", "test_patch": "diff --git a/t.py b/t.py\n",
               "problem_statement": "", "hints_text": "", "created_at": "2025-03-01T00:00:00Z",
               "version": "", "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p, "environment_setup_commit": "",
               "test_cmds": ["pytest -rA t.py"], "rebuild_cmds": [], "print_cmds": [], "log_parser": "pytest",
               "docker_image": "starryzhang/sweb.eval.x86_64." + iid.replace("__", "_1776_").lower()}
        f.write(json.dumps(row) + "\n")
        with open("logs/" + iid + ".log", "w") as lf:
            lf.write(text)
