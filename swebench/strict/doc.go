// Package strict is swebox's strict grading: verdicts a patch cannot move
// without fixing the bug, for people who train agents on SWE-bench-style
// rewards. Official grading (the default of package swebench) stays
// upstream's, hole for hole; strict grading starts from the official
// verdict and only ever takes a resolution away, each time with a finding
// that names the rule and what it refused or restored.
//
// # Threat
//
// The model patch is applied in /testbed and its code then runs inside the
// test process. Upstream trusts two things that code controls: the log
// (any line "PASSED <test>" counts, the last one wins) and the files that
// decide how tests run (conftest.py, pytest's configuration, the test
// files themselves). Four classes are known to resolve without a fix: a
// conftest.py hook that turns failed reports into passes (SWE-bench #631),
// forged PASSED lines printed at exit with status 0 (#601), a file the
// test patch creates written by the patch first so that the test patch's
// git apply fails and the model's test runs (#538, harbor #505), and
// poisoned test infrastructure such as a pytest.raises that swallows
// everything (#600).
//
// # Design
//
// Three layers, each closing what the previous cannot:
//
//  1. The test patch is a hard requirement and the test infrastructure is
//     the base commit's. [Run.Script] rewrites the eval script: the files
//     the test patch creates are removed before it is applied (so it
//     applies and its tests are the ones that run); an apply that still
//     fails refuses the instance. Right before the start marker, after the
//     install step, a guard written in bash and git (no code of the
//     repository runs in it) walks every path that differs from the base
//     commit, untracked and ignored files included, and puts back as the
//     base commit has them: every conftest.py, pytest.ini, sitecustomize.py,
//     usercustomize.py and *.pth; tox.ini, setup.cfg and pyproject.toml
//     when their pytest section changed (a fix may change the rest); and
//     the files holding graded tests that the test patch does not reset.
//     PYTEST_ADDOPTS, PYTEST_PLUGINS and PYTHONSTARTUP are unset, and a
//     pytest or python that resolves to a file of the repository is
//     refused. Restoring rather than refusing keeps a real fix that touches
//     these files gradable: the tests then decide, and the finding says
//     what was put back and why.
//  2. Results come from the runner, not from the log. For pytest commands
//     the script loads a plugin of ours ("-p swebox_strict", from the
//     staged directory put first on PYTHONPATH). pytest imports it while
//     it reads its command line, before any conftest.py, test module or
//     module of the repository, so it sees the test machinery as the image
//     has it. It records each test's outcome as the test ends, each record
//     signed (HMAC-SHA256) with a key it reads from a file and removes at
//     once, into a file in the sandbox's /tmp that the host reads back
//     after the script. The key is in the script text only, which the
//     sandbox reads into memory and removes before anything runs. Lines
//     printed to the log, forged or not, do not decide: a graded test the
//     log says passed and the runner's report does not is refused; a
//     report with no closing record (a process that ended itself before
//     pytest finished, os._exit at exit) or whose session status differs
//     from the process's exit status is refused, as is any unsigned record.
//     The plugin also compares, at collection, at each test's teardown and
//     at the end, the objects tests use to decide outcomes (pytest.raises,
//     warns, approx, fail, skip, xfail, the runner's call_and_report,
//     CallInfo.from_call, TestReport.from_item_and_call, Function.runtest,
//     unittest's assertions) with those it saw first: one rebound by code
//     of the patch outside any test (a package __init__ that replaces
//     pytest.raises) refuses the instance. A plugin module the patch changed
//     that implements a reporting hook (pytest_runtest_makereport and the
//     like) is refused.
//  3. Log rules, which need nothing but the log and so also apply to logs
//     graded on their own (the grade verb, rewrite mode, the official logs
//     the tests hold): the harness's markers once each and in order, no
//     graded test reported both passing and failing, and a non-zero exit
//     status of the test command never beside a log without failures
//     (upstream 5.0's rule, applied under v4 rules too). None of them turns
//     an official resolved into unresolved on the logs the tests hold.
//
// The verdict is the official verdict (of the log the strict run wrote),
// and not resolved when any finding refuses; report.json carries it as
// "resolved" and the note swebox.strict (channel, the official verdict,
// findings); the run report lists each instance's findings under
// swebox_strict. In official mode neither appears.
//
// # What it does not guarantee
//
// Code of the patch runs in the test process with the test runner, as the
// same user: it can read the plugin's memory (the key) and forge signed
// records, or rebind objects the plugin does not watch. A patch whose
// install step (prebuilt mode runs setup.py again, as upstream does) leaves
// a process running can read what the script writes later. Test commands
// other than pytest (Django's runtests.py, sympy's bin/test, tox, the
// JavaScript and other languages' runners) get layers 1 and 3 only: their
// results still come from the log, and their own configuration files
// (jest.config.js, package.json scripts, .mocharc) are not restored. Strict
// grading raises the cost of reward hacking from one file to deliberate
// subversion of the interpreter; it is not a proof that a resolved patch
// is a fix.
package strict
