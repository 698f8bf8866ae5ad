# Writes rows.jsonl and logs/: SWE-smith rows in the form its gather.py
# writes them (instance_id, patch, FAIL_TO_PASS, PASS_TO_PASS, created_at,
# image_name, repo, base_commit) and, per row, what the container prints
# for /eval.sh (bash -x), plus what the fake engine answers for the
# checkout and the patch steps ("fail" lists the commands that exit 1).
import json, os

START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
PATCH = """diff --git a/src/mod.py b/src/mod.py
--- a/src/mod.py
+++ b/src/mod.py
@@ -1,2 +1,2 @@
 def f(x):
-    return x + 1
+    return x - 1
"""


def log(body, start=True, end=True, head="+ source /opt/miniconda3/bin/activate\n++ conda activate testbed\n+ cd /testbed\n"):
    out = head
    if start:
        out += "+ : '" + START + "'\n"
    out += body
    if end:
        out += "+ : '" + END + "'\n"
    return out


def image(iid):
    owner, rest = iid.split("__", 1)
    repo, commit = rest.split(".")[:2]
    return f"jyangballin/swesmith.x86_64.{owner}_1776_{repo}.{commit}".lower()


rows = []


def row(iid, f2p, p2p, body, gold=False, fail=(), timed_out=False, **kw):
    owner, rest = iid.split("__", 1)
    rows.append({
        "instance_id": iid, "patch": PATCH, "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p,
        "created_at": "2025-06-21T00:00:00", "image_name": image(iid),
        "repo": "swesmith/" + iid.rsplit(".", 1)[0], "base_commit": "%040x" % (len(rows) + 0xabc),
        "problem_statement": "f is wrong",
    })
    os.makedirs("logs", exist_ok=True)
    with open(os.path.join("logs", iid + ".json"), "w") as f:
        json.dump({"output": body, "gold": gold, "fail": list(fail), "timed_out": timed_out}, f, indent=1)


A = "mewwts__addict.75284f95"
row(A + ".func_pm_op_change__a1",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get", "tests/test_other.py::test_o"],
    log("tests/test_addict.py::Tests::test_add PASSED [ 33%]\ntests/test_addict.py::Tests::test_get PASSED [ 66%]\n"
        "tests/test_other.py::test_o FAILED [100%]\n"))
row(A + ".func_pm_op_change__a2",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log("tests/test_addict.py::Tests::test_add FAILED [ 50%]\ntests/test_addict.py::Tests::test_get PASSED [100%]\n"))
row(A + ".func_pm_remove_cond__a3",
    ["tests/test_addict.py::Tests::test_gone"], ["tests/test_addict.py::Tests::test_get", "tests/test_addict.py::Tests::test_skip"],
    log("tests/test_addict.py::Tests::test_get PASSED [ 50%]\ntests/test_addict.py::Tests::test_skip SKIPPED [100%]\n"))
row(A + ".combine_file__a4",
    ["tests/test_addict.py::Tests::test_add", "tests/test_more.py::test_m"], ["tests/test_more.py::test_n"],
    log("tests/test_addict.py::Tests::test_add PASSED\ntests/test_more.py::test_m ERROR\ntests/test_more.py::test_n PASSED\n"))
row(A + ".func_basic__a5",
    ["tests/test_addict.py::Tests::test_add"], [],
    log("tests/test_addict.py::Tests::test_add PASSED\n", end=False))
row(A + ".func_basic__a6",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log("tests/test_addict.py::Tests::test_add PASSED\n", end=False), timed_out=True)
row(A + ".func_basic__a7",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log(""), fail=["git apply --verbose", "git apply --verbose --reject", "patch --batch --fuzz=5 -p1 -i"])
row(A + ".func_basic__a8",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log(""), fail=["git checkout"])
row(A + ".func_basic__a9",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log("tests/test_addict.py::Tests::test_add PASSED\ntests/test_addict.py::Tests::test_get XFAIL\n"), gold=True)
row(A + ".func_basic__a10",
    ["tests/test_addict.py::Tests::test_add"], ["tests/test_addict.py::Tests::test_get"],
    log("tests/test_addict.py::Tests::test_add PASSED\n", head="") + "tests/test_addict.py::Tests::test_get FAILED\n",
    fail=["git apply --verbose"])
row(A + ".func_basic__a11",
    ["tests/test_addict.py::Tests::test_add"], [],
    "+ : '" + END + "'\ntests/test_addict.py::Tests::test_add PASSED\n+ : '" + START + "'\n")
row(A + ".func_basic__a12",
    ["tests/test_addict.py::Tests::test_add"], [],
    log("tests/test_addict.py::Tests::test_add PASSED\n>>>>> Tests Timed Out\n"))
P = "paramiko__paramiko.23f92003"
row(P + ".combine_file__p1",
    ["tests/test_client.py::SSHClientTest::test_auth"], ["tests/test_client.py::SSHClientTest::test_close"],
    log("tests/test_client.py::SSHClientTest::test_auth PASSED\n==== short test summary info ====\n"
        "PASSED tests/test_client.py::SSHClientTest::test_auth\nPASSED tests/test_client.py::SSHClientTest::test_close\n"))
row(P + ".combine_file__p2",
    ["tests/test_client.py::SSHClientTest::test_auth"], ["tests/test_client.py::SSHClientTest::test_close"],
    log("==== short test summary info ====\nPASSED tests/test_client.py::SSHClientTest::test_auth\n"
        "FAILED tests/test_client.py::SSHClientTest::test_close - AssertionError\n"))
G = "HIPS__autograd.ac044f0d"
row(G + ".lm_rewrite__g1",
    ["tests/test_core.py::test_grad"], ["tests/test_core.py::test_hess", "tests/test_core.py::test_x"],
    log("[gw0] PASSED tests/test_core.py::test_grad \n[gw1] XFAIL tests/test_core.py::test_hess \n"
        "[gw1] FAILED tests/test_core.py::test_x \n"))
row(G + ".lm_rewrite__g2",
    ["tests/test_core.py::test_grad"], ["tests/test_core.py::test_hess"],
    log("[gw0] PASSED tests/test_core.py::test_grad \n[gw1] PASSED tests/test_core.py::test_hess \n"))
M = "python__mypy.e93f06ce"
row(M + ".pr_1001",
    ["mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFoo",
     "mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBar"],
    ["mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBaz"],
    log("==== short test summary info ====\nPASSED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFoo\n"
        "PASSED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBar\n"
        "FAILED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testBaz\n"))
row(M + ".pr_1002",
    ["mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFoo"], [],
    log("==== short test summary info ====\nPASSED mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testFoo\n"))

with open("rows.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(len(rows), "rows")
