# Writes rows.jsonl and logs/: SWE-PolyBench rows in the dataset's form
# (F2P and P2P as Python list literals, a Dockerfile and test_command per
# row) and run logs as its harness's docker_run leaves them (stderr, then
# stdout, then "Container exited with status code: N" twice). Each row is
# one repository's parser class on a passing, failing or broken run.
import json, os

EXIT = "\nContainer exited with status code: {0}\nContainer exited with status code: {0}"
rows, logs = [], {}


def row(iid, repo, lang, cmd, f2p, p2p, log, code=0):
    rows.append({
        "instance_id": iid, "repo": repo, "base_commit": "0123456789abcdef0123456789abcdef01234567",
        "patch": "diff --git a/x b/x\n", "test_patch": "diff --git a/t b/t\n", "problem_statement": "p",
        "created_at": "2024-01-01T00:00:00Z", "language": lang, "task_category": "Bug Fix",
        "Dockerfile": "FROM polybench_%s_base\nWORKDIR /testbed\nCOPY . .\n" % lang.lower(),
        "test_command": cmd, "F2P": repr(f2p), "P2P": repr(p2p), "modified_nodes": "[]",
    })
    logs[iid] = log + EXIT.format(code)


def surefire(cases):
    out = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="S" tests="%d">' % len(cases)
    for cls, name, kind in cases:
        out += '<testcase name="%s" classname="%s" time="0.1">' % (name, cls)
        if kind == "fail":
            out += '<failure message="boom" type="java.lang.AssertionError">trace &lt;x&gt;</failure>'
        elif kind == "error":
            out += '<error message="e"/>'
        elif kind == "skip":
            out += '<skipped/>'
        out += '</testcase>'
    return out + '</testsuite>'


JAVA_HEAD = "+ mvn test -Dtest=FooTest\n+ read -r file\n+ cat target/surefire-reports/TEST-x.xml\n+ read -r file\n"
row("google__gson-1001", "google/gson", "Java", "mvn test; for f in target/surefire-reports/*.xml; do cat $f; done",
    ["com.google.gson.FooTest.testA"], ["com.google.gson.FooTest.testB", "com.google.gson.FooTest.testC"],
    JAVA_HEAD + "[INFO] BUILD SUCCESS\n" + surefire([("com.google.gson.FooTest", "testA", "ok"),
                                                   ("com.google.gson.FooTest", "testB", "ok"),
                                                   ("com.google.gson.FooTest", "testC", "skip")]))
row("apache__dubbo-1002", "apache/dubbo", "Java", "mvn test",
    ["org.apache.dubbo.BarTest.testNew"], ["org.apache.dubbo.BarTest.testOld"],
    JAVA_HEAD + "[ERROR] There are test failures.\n[INFO] BUILD FAILURE\n" +
    surefire([("org.apache.dubbo.BarTest", "testNew", "fail"), ("org.apache.dubbo.BarTest", "testOld", "ok")]), 1)
row("trinodb__trino-1003", "trinodb/trino", "Java", "mvn test",
    ["io.trino.ZTest.testZ"], [],
    JAVA_HEAD + "[ERROR] COMPILATION ERROR :\n[INFO] BUILD FAILURE\n" +
    surefire([("io.trino.ZTest", "testZ", "ok")]), 1)
row("apolloconfig__apollo-1004", "apolloconfig/apollo", "Java", "mvn test",
    ["com.ctrip.ApolloTest.testA"], ["com.ctrip.ApolloTest.testB"],
    JAVA_HEAD + "[INFO] BUILD SUCCESS\n" + '<testsuite name="Broken"><testcase name="testA" classname="com.ctrip.ApolloTest">&nbsp;</testcase></testsuite>\n' +
    surefire([("com.ctrip.ApolloTest", "testB", "error")]))
row("mrdoob__three.js-1005", "mrdoob/three.js", "JavaScript", "npx qunit -r tap",
    ["Maths - Vector3 - applyMatrix4"], ["Maths - Vector3 - add"],
    "+ npx qunit -r tap\nTAP version 13\nok 1 Maths - Vector3 - applyMatrix4\nok 2 Maths - Vector3 - add\nnot ok 3 Maths - Box3 - union\n1..3\n")
row("sveltejs__svelte-1006", "sveltejs/svelte", "JavaScript", "npm test -- --reporter json",
    ["runtime each-block-keyed"], ["runtime if-block"],
    "+ npm test -- --reporter json\n\n> svelte@3.0.0 test\n> mocha --exit --reporter json\n\n" + json.dumps({
        "stats": {"tests": 2, "passes": 1, "failures": 1},
        "passes": [{"title": "if-block", "fullTitle": "runtime if-block"}],
        "failures": [{"title": "each-block-keyed", "fullTitle": "runtime each-block-keyed", "err": {"message": "x"}}]}, indent=2) + "\n", 1)
row("prettier__prettier-1007", "prettier/prettier", "JavaScript", "yarn jest --json",
    ["tests/format/js/jsfmt.spec.js->format js"], ["tests/format/ts/jsfmt.spec.js->format ts"],
    "+ yarn jest --json\nPASS tests/format/js/jsfmt.spec.js\n" + json.dumps({
        "numFailedTestSuites": 0, "numPassedTests": 2,
        "testResults": [{"name": "tests/format/js/jsfmt.spec.js", "assertionResults": [{"fullName": "format js", "title": "js", "status": "passed"}]},
                        {"name": "tests/format/ts/jsfmt.spec.js", "assertionResults": [{"title": "format ts", "status": "passed"}, {"title": "pending", "status": "pending"}]}],
        "wasInterrupted": False}, separators=(",", ":")) + "\nDone in 3s.\n")
row("serverless__serverless-1008", "serverless/serverless", "JavaScript", "npx mocha --reporter json test/unit",
    ["lib/plugins/aws deploys"], [],
    "+ npx mocha --reporter json test/unit\nnpm ERR! code ENOTFOUND\nnpm ERR! network request failed\n", 1)
row("microsoft__vscode-1009", "microsoft/vscode", "TypeScript", "yarn test --reporter json",
    ["Editor - cursor moves"], ["Editor - cursor stays"],
    "+ yarn test --reporter json\n" + json.dumps({
        "stats": {"tests": 2}, "tests": [],
        "passes": [{"fullTitle": "Editor - cursor moves"}, {"fullTitle": "Editor - cursor stays"}], "failures": []}) + "\n")
row("angular__angular-1010", "angular/angular", "TypeScript", "bazel test //packages/core/test",
    ["/packages/core/test:test"], ["/packages/core/test:test_web"],
    "+ bazel test //packages/core/test\nINFO: Build completed\n//packages/core/test:test \x1b[0m\x1b[32mPASSED\x1b[0m in 12.3s\n//packages/core/test:test_web \x1b[32mPASSED\x1b[0m in 20.1s\n//packages/core/test:test_node \x1b[31m\x1b[1mFAILED\x1b[0m in 1.0s\n")
row("mui__material-ui-1011", "mui/material-ui", "TypeScript", "yarn test:unit --reporter json",
    ["packages/Button/Button.test.js->Button renders"], ["packages/Chip/Chip.test.js->Chip renders"],
    "+ yarn test:unit\n" + json.dumps({
        "stats": {"tests": 2},
        "tests": [{"file": "packages/Button/Button.test.js", "fullTitle": "Button renders", "status": "failed"},
                  {"file": "packages/Chip/Chip.test.js", "fullTitle": "Chip renders", "status": "passed"}]}) + "\n", 1)
row("tailwindlabs__tailwindcss-1012", "tailwindlabs/tailwindcss", "TypeScript", "npx jest --json",
    ["tests/variants.test.js->variants work"], ["tests/basic.test.js->basic"],
    "+ npx jest --json\n" + json.dumps({
        "numFailedTestSuites": 0,
        "testResults": [{"name": "tests/variants.test.js", "assertionResults": [{"fullName": "x variants work", "title": "variants work", "status": "passed"}]},
                        {"name": "tests/basic.test.js", "assertionResults": [{"title": "basic", "status": "passed"}]}],
        "wasInterrupted": False}, separators=(",", ":")) + "\n")
row("coder__code-server-1013", "coder/code-server", "TypeScript", "yarn test:unit --json",
    ["test/unit/node/cli.test.ts->cli parses"], [],
    '+ yarn test:unit --json\n{"numFailedTestSuites":0,"testResults":[{"name":"test/unit/node/cli.test.ts","assertionResults":[{"fullName":"cli parses","status":"pas\n', 137)
row("coder__code-server-1014", "coder/code-server", "TypeScript", "yarn test:unit --json",
    ["test/unit/node/cli.test.ts->cli parses"], ["test/unit/node/util.test.ts->util works"],
    "+ yarn test:unit --json\n" + json.dumps({
        "numFailedTestSuites": 0,
        "testResults": [{"name": "test/unit/node/cli.test.ts", "assertionResults": [{"fullName": "cli parses", "status": "passed"}]},
                        {"name": "test/unit/node/util.test.ts", "assertionResults": [{"fullName": "util works", "status": "failed"}]}]}) + "\n", 1)
row("huggingface__transformers-1015", "huggingface/transformers", "Python", "pytest -rA tests/test_x.py",
    ["tests/test_x.py:TestX:test_new"], ["tests/test_x.py:TestX:test_old", "tests/test_x.py:None:test_gone"],
    "+ pytest -rA tests/test_x.py\n============================= test session starts ==============================\ncollected 3 items\n\ntests/test_x.py::TestX::test_new PASSED\ntests/test_x.py::TestX::test_old PASSED\ntests/test_x.py::TestX::test_param[a-1] FAILED\n\n=========================== short test summary info ============================\nFAILED tests/test_x.py::TestX::test_param[a-1] - assert 0\n========================= 1 failed, 2 passed in 0.5s =========================\n", 1)
row("keras-team__keras-1016", "keras-team/keras", "Python", "pytest -rA keras/layers/dense_test.py",
    ["keras/layers/dense_test.py:DenseTest:test_fix"], ["keras/layers/dense_test.py:DenseTest:test_ok"],
    "+ pytest keras/layers/dense_test.py\n==================== test session starts ====================\nkeras/layers/dense_test.py::DenseTest::test_fix FAILED\nkeras/layers/dense_test.py::DenseTest::test_ok PASSED\n==================== short test summary info ====================\nFAILED keras/layers/dense_test.py::DenseTest::test_fix\n", 1)
row("yt-dlp__yt-dlp-1017", "yt-dlp/yt-dlp", "Python", "python -m unittest -v test.test_utils",
    ["test.test_utils.TestUtil:test_parse:"], ["test.test_utils.TestUtil:test_old:"],
    "+ python -m unittest -v test.test_utils\ntest_parse (test.test_utils.TestUtil) ... ok\ntest_old (test.test_utils.TestUtil) ... ok\ntest_broken (test.test_utils.TestUtil) ... FAIL\n\n======================================================================\nFAIL: test_broken (test.test_utils.TestUtil)\n----------------------------------------------------------------------\nRan 3 tests in 0.01s\n\nFAILED (failures=1)\n", 1)
row("langchain-ai__langchain-1018", "langchain-ai/langchain", "Python", "pytest tests/unit",
    ["tests/unit/test_a.py:None:test_a"], ["tests/unit/test_b.py:None:test_b"],
    "+ pytest tests/unit\nImportError: cannot import name 'x'\n", 4)
row("google__guava-1019", "google/guava", "Java", "mvn test",
    ["com.google.common.ListsTest.testX"], ["com.google.common.ListsTest.testY"],
    JAVA_HEAD + "[ERROR] There are test failures.\n" +
    surefire([("com.google.common.ListsTest", "testX", "ok"), ("com.google.common.ListsTest", "testY", "ok")]) + "\n" +
    surefire([("com.google.common.ListsTest", "testY", "fail")]), 1)

os.makedirs("logs", exist_ok=True)
with open("rows.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
for iid, text in logs.items():
    with open(os.path.join("logs", iid + ".log"), "w") as f:
        f.write(text)
print(len(rows), "rows")
