# Fixture rows and logs in SWE-rebench's format: rows as nebius/SWE-rebench
# and nebius/SWE-rebench-leaderboard spell them (install_config a JSON
# object with the fork's keys, None where a recipe has no value), logs as
# the fork's harness writes test_output.txt (eval.sh traced by set -x, the
# test output between the markers).
import json

S = "+ : '>>>>> Start Test Output'"
E = "+ : '>>>>> End Test Output'"
def log(*lines, cmd="pytest -rA", end=True):
    out = ["+ source /opt/miniconda3/bin/activate", "+ git apply -v -", "Applied patch tests/test_x.py cleanly.", S, "+ " + cmd]
    out += list(lines)
    if end:
        out += [E, "+ git checkout 0123abcd tests/test_x.py"]
    return "\n".join(out) + "\n"

def patch(*files, deleted=(), new=()):
    p = ""
    for f in files:
        p += f"diff --git a/{f} b/{f}\nindex 1111111..2222222 100644\n--- a/{f}\n+++ b/{f}\n@@ -1,1 +1,2 @@\n x\n+y\n"
    for f in new:
        p += f"diff --git a/{f} b/{f}\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/{f}\n@@ -0,0 +1,1 @@\n+y\n"
    for f in deleted:
        p += f"diff --git a/{f} b/{f}\ndeleted file mode 100644\nindex 2222222..0000000\n--- a/{f}\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n"
    return p

PYTEST = "pytest --no-header -rA --tb=line --color=no -p no:cacheprovider -W ignore::DeprecationWarning"
def cfg(parser="parse_log_pytest", **kw):
    c = {"python": "3.9", "install": "pip install -e .", "pre_install": None, "reqs_path": None,
         "env_yml_path": None, "env_vars": None, "pip_packages": ["pytest"], "packages": None,
         "no_use_env": None, "test_cmd": PYTEST, "log_parser": parser}
    c.update(kw)
    return c

P = patch("tests/test_x.py")
rows = [
 # parse_log_pytest: all pass
 ("oemof__tespy-653", "oemof/tespy", cfg(), P, ["tests/test_x.py::test_a"], ["tests/test_x.py::test_b"],
  log("PASSED tests/test_x.py::test_a", "PASSED tests/test_x.py::test_b")),
 # a failing FAIL_TO_PASS test
 ("oemof__tespy-654", "oemof/tespy", cfg(), P, ["tests/test_x.py::test_a"], ["tests/test_x.py::test_b"],
  log("FAILED tests/test_x.py::test_a - AssertionError: 1 != 2", "PASSED tests/test_x.py::test_b")),
 # a missing PASS_TO_PASS test fails the row (the official rule the fork keeps)
 ("biopython__biopython-5005", "biopython/biopython", cfg(install=None, python="3.11"), patch("Tests/test_seq.py"),
  ["Tests/test_seq.py::test_a"], ["Tests/test_seq.py::test_b", "Tests/test_seq.py::gone"],
  log("PASSED Tests/test_seq.py::test_a", "PASSED Tests/test_seq.py::test_b")),
 # a missing FAIL_TO_PASS test; XFAIL counts as a pass
 ("biopython__biopython-5006", "biopython/biopython", cfg(python="2.7"), patch("Tests/test_seq.py"),
  ["Tests/test_seq.py::test_a", "Tests/test_seq.py::gone"], ["Tests/test_seq.py::test_x"],
  log("PASSED Tests/test_seq.py::test_a", "XFAIL Tests/test_seq.py::test_x - reason")),
 # parse_log_pytest_options: parametrized ids with paths, pre_install and eval_commands
 ("agronholm__anyio-1121", "agronholm/anyio",
  cfg("parse_log_pytest_options", pre_install=["apt-get update", "apt-get install -y gcc"],
      eval_commands=["export ANYIO_BACKEND=asyncio"], test_cmd="pytest -rA -p no:cacheprovider"),
  patch("tests/test_taskgroups.py", new=["tests/test_new.py"], deleted=["tests/test_old.py"]),
  ["tests/test_taskgroups.py::test_p[/b.txt]", "tests/test_new.py::test_n"], ["tests/test_taskgroups.py::test_q[asyncio]"],
  log("PASSED tests/test_taskgroups.py::test_p[/home/x/a/b.txt]", "PASSED tests/test_new.py::test_n",
      "PASSED tests/test_taskgroups.py::test_q[asyncio]", cmd="pytest -rA -p no:cacheprovider")),
 ("agronholm__anyio-1122", "agronholm/anyio", cfg("parse_log_pytest_options"),
  patch("tests/test_taskgroups.py", "tests/data.json", "docs/versionhistory.rst"),
  ["tests/test_taskgroups.py::test_p[trio]"], ["tests/test_taskgroups.py::test_q[asyncio]"],
  log("PASSED tests/test_taskgroups.py::test_p[trio]", "ERROR tests/test_taskgroups.py::test_q[asyncio] - fixture")),
 # parse_log_pytest_v2: colour codes and the [N] summary form
 ("pydata__xarray-9001", "pydata/xarray", cfg("parse_log_pytest_v2"), patch("xarray/tests/test_a.py"),
  ["xarray/tests/test_a.py::test_a"], ["xarray/tests/test_a.py::test_b"],
  log("\x1b[32mPASSED\x1b[0m xarray/tests/test_a.py::test_a", "PASSED xarray/tests/test_a.py::test_b")),
 ("pydata__xarray-9002", "pydata/xarray", cfg("parse_log_pytest_v2"), patch("xarray/tests/test_a.py"),
  ["xarray/tests/test_a.py::test_a"], ["xarray/tests/test_a.py::test_b"],
  log("FAILED xarray/tests/test_a.py::test_a - x - y", "PASSED xarray/tests/test_a.py::test_b")),
 # a repository of the official tables: its row's install_config decides, not the table
 ("astropy__astropy-17001", "astropy/astropy", cfg(test_cmd="pytest -rA -vv -o console_output_style=classic"),
  patch("astropy/io/tests/test_a.py"), ["astropy/io/tests/test_a.py::test_a"], [],
  log("PASSED astropy/io/tests/test_a.py::test_a", cmd="pytest -rA -vv -o console_output_style=classic")),
 # django: directives as modules; the row's own parser name
 ("django__django-19001", "django/django", cfg(test_cmd="./tests/runtests.py --verbosity 2", install="python -m pip install -e ."),
  patch("tests/admin_views/tests.py"), ["tests/admin_views/tests.py::test_a"], [],
  log("PASSED tests/admin_views/tests.py::test_a", cmd="./tests/runtests.py --verbosity 2")),
 # a log without the end marker (a timeout): nothing applied
 ("encode__httpx-3001", "encode/httpx", cfg(), P, ["tests/test_x.py::test_a"], [],
  log("PASSED tests/test_x.py::test_a", end=False)),
 # a test that fails, then passes on a rerun line: the later wins
 ("encode__httpx-3002", "encode/httpx", cfg(install="pip install -e .[dev]"), P,
  ["tests/test_x.py::test_a"], ["tests/test_x.py::test_b"],
  log("FAILED tests/test_x.py::test_a", "PASSED tests/test_x.py::test_a", "SKIPPED tests/test_x.py::test_b")),
 # no FAIL_TO_PASS, no PASS_TO_PASS
 ("encode__httpx-3003", "encode/httpx", cfg(), P, [], [], log("nothing ran")),
]

with open("rows.jsonl", "w") as f:
    for iid, repo, ic, tp, f2p, p2p, text in rows:
        row = {"instance_id": iid, "repo": repo, "base_commit": "0123abcd" * 5, "patch": "",
               "test_patch": tp, "problem_statement": "", "hints_text": "", "created_at": "2025-03-01T00:00:00Z",
               "version": "1.0", "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p),
               "environment_setup_commit": "", "install_config": ic, "meta": {"has_test_patch": True},
               "requirements": "", "environment": "", "license_name": "MIT"}
        f.write(json.dumps(row) + "\n")
        with open("logs/" + iid + ".log", "w") as lf:
            lf.write(text.replace("0123abcd", "0123abcd" * 5, 1))
