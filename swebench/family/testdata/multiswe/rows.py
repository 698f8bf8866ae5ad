# Writes rows.jsonl and logs/: Multi-SWE-bench rows in its dataset's schema
# and fix-run logs in the formats its ported instance classes parse, for
# passing, failing and infrastructure-failure cases (a log parse_log
# refuses, a missing log). Hand-written, no upstream code.
import json, os

def res(passed=(), failed=(), skipped=()):
    return {"passed_count": len(set(passed)), "failed_count": len(set(failed)), "skipped_count": len(set(skipped)),
            "passed_tests": sorted(set(passed)), "failed_tests": sorted(set(failed)), "skipped_tests": sorted(set(skipped))}

def tests(names, run, test):
    return {n: {"run": run, "test": test, "fix": "PASS"} for n in names}

rows, logs = [], {}
def row(org, repo, number, run, test, f2p=(), p2p=(), s2p=(), n2p=(), log=None, **extra):
    r = {"org": org, "repo": repo, "number": number, "state": "closed", "title": f"PR {number}", "body": "",
         "base": {"label": f"{org}:main", "ref": "main", "sha": "%040x" % (number * 7919)},
         "resolved_issues": [{"number": number - 1, "title": "an issue", "body": "it breaks"}],
         "fix_patch": "diff --git a/f b/f\n", "test_patch": "diff --git a/t b/t\n",
         "fixed_tests": {}, "f2p_tests": tests(f2p, "FAIL", "FAIL"), "p2p_tests": tests(p2p, "PASS", "PASS"),
         "s2p_tests": tests(s2p, "SKIP", "SKIP"), "n2p_tests": tests(n2p, "NONE", "NONE"),
         "run_result": run, "test_patch_result": test, "fix_patch_result": res()}
    r.update(extra)
    rows.append(r)
    if log is not None:
        logs[f"{org}__{repo}-{number}"] = log

# Java: alibaba/fastjson2, Maven Surefire summaries.
sf = "[INFO] Tests run: {}, Failures: {}, Errors: {}, Skipped: {}, Time elapsed: 0.{} s{} - in {}\n"
row("alibaba", "fastjson2", 2001, res(["com.alibaba.fastjson2.JSONTest"]), res(["com.alibaba.fastjson2.JSONTest"], ["com.alibaba.fastjson2.issues.Issue2001"]),
    f2p=["com.alibaba.fastjson2.issues.Issue2001"], p2p=["com.alibaba.fastjson2.JSONTest"],
    log="[INFO] Scanning for projects...\n" + sf.format(12, 0, 0, 0, 31, "", "com.alibaba.fastjson2.JSONTest") + sf.format(2, 0, 0, 0, 2, "", "com.alibaba.fastjson2.issues.Issue2001")
    + sf.format(3, 0, 0, 3, 0, "", "com.alibaba.fastjson2.SkippedTest") + "[INFO] BUILD SUCCESS\n")
row("alibaba", "fastjson2", 2002, res(["com.alibaba.fastjson2.JSONTest"]), res(["com.alibaba.fastjson2.JSONTest"], ["com.alibaba.fastjson2.issues.Issue2002"]),
    f2p=["com.alibaba.fastjson2.issues.Issue2002"], p2p=["com.alibaba.fastjson2.JSONTest"],
    log=sf.format(12, 0, 0, 0, 3, "", "com.alibaba.fastjson2.JSONTest") + sf.format(2, 1, 0, 0, 1, " <<< FAILURE!", "com.alibaba.fastjson2.issues.Issue2002") + "[ERROR] BUILD FAILURE\n")

# Go: cli/cli, go test -v.
row("cli", "cli", 3001, res(["TestOld"]), res(["TestOld"], ["TestNew"]), f2p=["TestNew"], p2p=["TestOld"],
    log="=== RUN   TestOld\n--- PASS: TestOld (0.00s)\n=== RUN   TestNew\n--- PASS: TestNew (0.01s)\n    --- PASS: TestNew/sub_case (0.00s)\nPASS\nok  \tgithub.com/cli/cli/v2/pkg/cmd\t0.123s\n")
row("cli", "cli", 3002, res(["TestOld"]), res(["TestOld"], ["TestNew"]), f2p=["TestNew"], p2p=["TestOld"],
    log="--- FAIL: TestOld (0.00s)\n    old_test.go:12: boom\n--- PASS: TestNew (0.01s)\nFAIL\nFAIL\tgithub.com/cli/cli/v2/pkg/cmd\t0.2s\n")
row("cli", "cli", 3003, res(["TestOld", "TestKeep"]), res(["TestOld", "TestKeep"], ["TestNew"]), f2p=["TestNew"], p2p=["TestOld", "TestKeep"],
    log="--- PASS: TestOld (0.00s)\n--- SKIP: TestKeep (0.00s)\n--- PASS: TestNew (0.00s)\nok  \tgithub.com/cli/cli/v2/api\t0.01s\n")

# Rust: tokio-rs/bytes, cargo test.
row("tokio-rs", "bytes", 4001, res(["buf::put_u8"], [], ["flaky"]), res(["buf::put_u8"], ["bytes::new_api"], ["flaky"]),
    f2p=["bytes::new_api"], p2p=["buf::put_u8"], s2p=["flaky"],
    log="running 3 tests\ntest buf::put_u8 ... ok\ntest bytes::new_api ... ok\ntest flaky ... ok\ntest heavy ... ignored\n\ntest result: ok. 3 passed; 0 failed; 1 ignored\n")
row("tokio-rs", "bytes", 4002, res(["buf::put_u8"]), res(["buf::put_u8"], ["bytes::new_api"]), f2p=["bytes::new_api"], p2p=["buf::put_u8"],
    log="test buf::put_u8 ... ok\ntest bytes::new_api ... ok\ntest bytes::new_api ... FAILED\n")

# C: jqlang/jq, automake's make check.
row("jqlang", "jq", 5001, res(["tests/optionaltest", "tests/jqtest"]), res(["tests/optionaltest"], ["tests/jqtest"]),
    f2p=["tests/jqtest"], p2p=["tests/optionaltest"], n2p=["tests/newtest"],
    log="make  check-TESTS\nPASS: tests/optionaltest\nPASS: tests/jqtest\nPASS: tests/newtest\nSKIP: tests/shtest\n============================================================================\n# TOTAL: 4\n")
row("jqlang", "jq", 5002, res(["tests/jqtest"]), res([], ["tests/jqtest"]), f2p=["tests/jqtest"],
    log="src/builtin.c:12:1: error: expected ';' before '}' token\nmake: *** [Makefile:1: all] Error 2\n")

# C++: fmtlib/fmt, ctest.
row("fmtlib", "fmt", 6001, res(["args-test", "format-test"]), res(["args-test"], ["format-test"]), f2p=["format-test"], p2p=["args-test"],
    log="Test project /home/fmt/build\n    Start 1: args-test\n1/2 Test #1: args-test ........................   Passed    0.01 sec\n2/2 Test #2: format-test ......................   Passed    0.20 sec\n\n100% tests passed, 0 tests failed out of 2\n")
row("fmtlib", "fmt", 6002, res(["args-test", "color-test"]), res(["args-test"], ["format-test"]), f2p=["format-test"], p2p=["args-test"],
    log="1/3 Test #1: args-test ........................   Passed    0.01 sec\n2/3 Test #2: format-test ......................   Passed    0.20 sec\n3/3 Test #3: color-test .......................***Failed\n")

# TypeScript: vuejs/core, vitest --reporter=verbose.
row("vuejs", "core", 7001, res(["packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > effect"]),
    res(["packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > effect"], ["packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > deep"]),
    f2p=["packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > deep"], p2p=["packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > effect"],
    log=" ✓ packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > effect 3ms\n ✓ packages/runtime-core/__tests__/apiWatch.spec.ts > api: watch > deep\n\n Test Files  1 passed (1)\n")
row("vuejs", "core", 7002, res(["a.spec.ts > keeps"]), res(["a.spec.ts > keeps"], ["a.spec.ts > fixes"]), f2p=["a.spec.ts > fixes"], p2p=["a.spec.ts > keeps"],
    log=" ✓ a.spec.ts > keeps 1ms\n × a.spec.ts > other 12ms\n ✓ a.spec.ts > unrelated new test\n")

# JavaScript: iamkun/dayjs, jest --verbose.
row("iamkun", "dayjs", 8001, res(["test/parse.test.js", "test/parse.test.js:parses ISO"]),
    res(["test/parse.test.js", "test/parse.test.js:parses ISO"], ["test/plugin/utc.test.js", "test/plugin/utc.test.js:keeps offset"]),
    f2p=["test/plugin/utc.test.js", "test/plugin/utc.test.js:keeps offset"], p2p=["test/parse.test.js", "test/parse.test.js:parses ISO"],
    log="> dayjs@1.8.0 test\nPASS test/parse.test.js (5.2s)\n  ✓ parses ISO (12ms)\nPASS test/plugin/utc.test.js\n  ✓ keeps offset (3ms)\n")
row("iamkun", "dayjs", 8002, res(["test/parse.test.js"]), res(["test/parse.test.js"], ["test/x.test.js"]), f2p=["test/x.test.js"], p2p=["test/parse.test.js"],
    log="  ✓ a test before any suite (1ms)\nPASS test/parse.test.js\n")
row("iamkun", "dayjs", 8003, res(["test/parse.test.js"]), res(["test/parse.test.js"], ["test/x.test.js"]), f2p=["test/x.test.js"], p2p=["test/parse.test.js"],
    log=None)  # no fix-patch-run.log: the run never wrote one

with open("rows.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
os.makedirs("logs", exist_ok=True)
for name in os.listdir("logs"):
    os.remove(os.path.join("logs", name))
for k, v in logs.items():
    with open(os.path.join("logs", k + ".log"), "w", encoding="utf-8") as f:
        f.write(v)
print(len(rows), "rows,", len(logs), "logs")
