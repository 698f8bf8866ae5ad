package logparse_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

type sm = logparse.StatusMap

// TestQuirks pins, one by one, the official rules and the quirks the
// reference lists (sections 2 and 6), for both rule sets where they differ.
func TestQuirks(t *testing.T) {
	type testCase struct {
		name    string
		parser  string
		rules   harness.Rules // "" runs both and expects the same result
		log     string
		want    sm
		wantErr bool
	}
	cases := []testCase{
		// pytest
		{name: "pytest failed line drops every dash separator", parser: "pytest",
			log:  "FAILED t.py::test_a - assert 1 - 2\n",
			want: sm{"t.py::test_a": logparse.FAILED}},
		{name: "pytest name cut at first whitespace", parser: "pytest",
			log:  "PASSED t.py::test_p[a b]\nFAILED t.py::test_p[a d] - boom\n",
			want: sm{"t.py::test_p[a": logparse.FAILED}},
		{name: "pytest wrapped progress line keeps [100%]", parser: "pytest",
			log:  "PASSED\nPASSED                                     [100%]\n",
			want: sm{"[100%]": logparse.PASSED}},
		{name: "pytest v4 skip summary is a test named [1]", parser: "pytest", rules: harness.V4,
			log:  "SKIPPED [1] t.py:3: no\nSKIPPED [12] t.py:9: no\n",
			want: sm{"[1]": logparse.SKIPPED, "[12]": logparse.SKIPPED}},
		{name: "pytest v5 drops skip summaries only", parser: "pytest", rules: harness.V5,
			log:  "SKIPPED [1] t.py:3: no\nSKIPPED t.py::test_s\nPASSED [2]\n",
			want: sm{"t.py::test_s": logparse.SKIPPED, "[2]": logparse.PASSED}},
		{name: "pytest keeps the raw status token", parser: "pytest",
			log:  "ERROR: usage: pytest [options]\nPASSEDX t.py::a\n",
			want: sm{"usage:": "ERROR:", "t.py::a": "PASSEDX"}},
		{name: "pytest ignores verbose progress lines and xpass", parser: "pytest",
			log:  "t.py::test_a PASSED [ 50%]\nXPASS t.py::test_x reason\n",
			want: sm{}},
		{name: "pytest later line wins", parser: "pytest",
			log:  "PASSED t.py::a\nERROR t.py::a - teardown\n",
			want: sm{"t.py::a": logparse.ERROR}},
		{name: "pytest splits on python whitespace", parser: "pytest",
			log:  "PASSED\x1ct.py::a\u00a0b\n",
			want: sm{"t.py::a": logparse.PASSED}},
		{name: "pytest does not strip colours", parser: "pytest",
			log:  "\x1b[32mPASSED\x1b[0m t.py::a\n",
			want: sm{}},
		// pytest_options
		{name: "options keep the last path segment", parser: "pytest_options",
			log: "PASSED t.py::test_u[/testbed/tests/test_utils.py]\nPASSED t.py::test_u[/]\n" +
				"PASSED t.py::test_u[//net/share]\nPASSED t.py::test_u[/a/*.py]\nPASSED t.py::test_u[rel/path]\n",
			want: sm{"t.py::test_u[/test_utils.py]": logparse.PASSED, "t.py::test_u[/]": logparse.PASSED,
				"t.py::test_u[//net/share]": logparse.PASSED, "t.py::test_u[/a/*.py]": logparse.PASSED,
				"t.py::test_u[rel/path]": logparse.PASSED}},
		{name: "options drop text after the last bracket", parser: "pytest_options",
			log:  "PASSED t.py::test_u[a]b\nPASSED t.py::test_v[x][/p/q]\nPASSED t.py::test_w[\n",
			want: sm{"t.py::test_u[a]": logparse.PASSED, "t.py::test_v[x][/p/q]": logparse.PASSED, "t.py::test_w[": logparse.PASSED}},
		{name: "options v4 keeps skip summaries", parser: "pytest_options", rules: harness.V4,
			log:  "SKIPPED [3] t.py:1: x\n",
			want: sm{"[3]": logparse.SKIPPED}},
		{name: "options v5 drops skip summaries", parser: "pytest_options", rules: harness.V5,
			log:  "SKIPPED [3] t.py:1: x\n",
			want: sm{}},
		// pytest_v2
		{name: "v2 strips colours and control characters", parser: "pytest_v2",
			log:  "\x1b[32mPASSED\x1b[0m t.py::\x1b[1mtest_a\x1b[0m\n\x1b[1;31mFAILED\x1b[0m t.py::test_b\n",
			want: sm{"t.py::test_a": logparse.PASSED}},
		{name: "v2 tab glues status to name", parser: "pytest_v2",
			log:  "PASSED\tt.py::a\nFAILED t.py::b\r\n",
			want: sm{"t.py::b": logparse.FAILED}},
		{name: "v2 v4 end branch maps first token to second", parser: "pytest_v2", rules: harness.V4,
			log:  "t.py::test_a PASSED\nt.py::test_p[a b] FAILED\nsome words that end in ERROR\n",
			want: sm{"t.py::test_a": logparse.PASSED, "t.py::test_p[a": "b]", "some": "words"}},
		{name: "v2 v5 end branch keys the full name", parser: "pytest_v2", rules: harness.V5,
			log:  "t.py::test_a PASSED\nt.py::test_p[a  b] FAILED\n",
			want: sm{"t.py::test_a": logparse.PASSED, "t.py::test_p[a b]": logparse.FAILED}},
		{name: "v2 v4 start branch truncates at whitespace", parser: "pytest_v2", rules: harness.V4,
			log:  "PASSED t.py::test_p[a b]\nFAILED t.py::test_q[c - d] - boom\nXFAIL t.py::test_x - reason\n",
			want: sm{"t.py::test_p[a": logparse.PASSED, "t.py::test_q[c": logparse.FAILED, "t.py::test_x": logparse.XFAIL}},
		{name: "v2 v5 cuts failed lines at the first dash and keeps reasons elsewhere", parser: "pytest_v2", rules: harness.V5,
			log:  "PASSED t.py::test_p[a b]\nFAILED t.py::test_q[c - d] - boom\nXFAIL t.py::test_x - reason\nSKIPPED [1] t.py:1: no\n",
			want: sm{"t.py::test_p[a b]": logparse.PASSED, "t.py::test_q[c": logparse.FAILED, "t.py::test_x - reason": logparse.XFAIL}},
		{name: "v2 bare status lines", parser: "pytest_v2",
			log:  "PASSED\nFAILED\n",
			want: sm{}},
		// matplotlib
		{name: "matplotlib replaces mouse buttons", parser: "matplotlib",
			log:  "PASSED t.py::test_m[MouseButton.LEFT-MouseButton.RIGHT]\nFAILED t.py::test_n[MouseButton.RIGHT] - x - y\n",
			want: sm{"t.py::test_m[1-3]": logparse.PASSED, "t.py::test_n[3]": logparse.FAILED}},
		{name: "matplotlib v4 keeps skip summaries", parser: "matplotlib", rules: harness.V4,
			log:  "SKIPPED [10] lib/matplotlib/testing/compare.py:285: no svg\n",
			want: sm{"[10]": logparse.SKIPPED}},
		{name: "matplotlib v5 drops skip summaries", parser: "matplotlib", rules: harness.V5,
			log:  "SKIPPED [10] lib/matplotlib/testing/compare.py:285: no svg\n",
			want: sm{}},
		// seaborn
		{name: "seaborn records passed and failed only", parser: "seaborn",
			log:  "PASSED t.py::a\nFAILED t.py::b - x\nXFAIL t.py::c - r\nERROR t.py::d\nt.py::e PASSED [ 10%]\nt.py::f g PASSED h\n",
			want: sm{"t.py::a": logparse.PASSED, "t.py::b": logparse.FAILED, "t.py::e": logparse.PASSED}},
		{name: "seaborn v4 raises on a bare failed line", parser: "seaborn", rules: harness.V4,
			log: "PASSED t.py::a\nFAILED\n", wantErr: true},
		{name: "seaborn v4 raises on a lone PASSED token", parser: "seaborn", rules: harness.V4,
			log: " PASSED \n", wantErr: true},
		{name: "seaborn v5 skips bare status lines", parser: "seaborn", rules: harness.V5,
			log:  "PASSED t.py::a\nFAILED\n PASSED \nPASSED\n",
			want: sm{"t.py::a": logparse.PASSED}},
		// sympy
		{name: "sympy verbose lines and failure banners", parser: "sympy",
			log: "sympy/a/tests/test_b.py[4] \ntest_one ok\ntest_two F\ntest_three E\ntest_four f\n" +
				"test_five ok                                                 [FAIL]\n" +
				"________________________________________________________________________________\n" +
				"_____________ sympy/a/tests/test_b.py:test_two ______________\n",
			want: sm{"test_one": logparse.PASSED, "test_two": logparse.FAILED, "test_three": logparse.ERROR,
				"sympy/a/tests/test_b.py:test_two": logparse.FAILED}},
		{name: "sympy banner regex matches any .py: after a space", parser: "sympy",
			log:  "  warn at x/y.py:12: in f here\n",
			want: sm{" warn at x/y.py:12: in f": logparse.FAILED}},
		// django
		{name: "django verdict suffixes", parser: "django",
			log: "test_a (m.C) ... ok\ntest_b (m.C) ... OK\ntest_c (m.C) ...  OK\ntest_d (m.C) ... skipped 'x'\n" +
				"test_e (m.C) ... FAIL\ntest_f (m.C) ... ERROR\ntest_g (m.C) ... expected failure\n",
			want: sm{"test_a (m.C)": logparse.PASSED, "test_b (m.C)": logparse.PASSED, "test_c (m.C)": logparse.PASSED,
				"test_d (m.C)": logparse.SKIPPED, "test_e (m.C)": logparse.FAILED, "test_f (m.C)": logparse.ERROR}},
		{name: "django failure blocks key the bare method", parser: "django",
			log:  "FAIL: test_x (m.C)\nERROR: test_y (m.C) [<obj>] (value=1)\n",
			want: sm{"test_x": logparse.FAILED, "test_y": logparse.ERROR}},
		{name: "django docstring names the test", parser: "django",
			log:  "test_sig (m.C)\nSIGINT is ignored. ... skipped 'needs db'\n",
			want: sm{"SIGINT is ignored.": logparse.SKIPPED}},
		{name: "django ok on a later line passes the previous test", parser: "django",
			log:  "test_a (m.C) ... some output\nmore output\n  ok\n",
			want: sm{"test_a (m.C)": logparse.PASSED}},
		{name: "django interleaved output makes one composite name", parser: "django",
			log:  "test_j (m.C) ... test_l (m.C) ... ok\n",
			want: sm{"test_j (m.C) ... test_l (m.C)": logparse.PASSED}},
		{name: "django 7188 migration prefix", parser: "django",
			log:  "  Applying sites.0002_alter_domain_unique...test_no_migrations (m.C) ... ok\n",
			want: sm{"test_no_migrations (m.C)": logparse.PASSED}},
		{name: "django version docstring", parser: "django",
			log:  "test_version (admin_scripts.tests.CommandTypes)\n--version is equivalent to version ... ok\n",
			want: sm{"--version is equivalent to version": logparse.PASSED}},
		{name: "django multiline regexes", parser: "django",
			log: "test_s (m.C) ... System check identified no issues (0 silenced)\nok\n" +
				"test_i (m.C) ... Internal Server Error: /admin/x/\nok\n" +
				"test_t (m.C) ... Testing against Django installed in '/x'\nFound 2 tests\nSystem check identified no issues (0 silenced).\nok\n",
			want: sm{"test_s (m.C)": logparse.PASSED, "test_i (m.C)": logparse.PASSED, "test_t (m.C)": logparse.PASSED}},
		{name: "django lone FAIL: raises", parser: "django",
			log: "FAIL:\n", wantErr: true},
		// other languages
		{name: "gotest", parser: "gotest",
			log:  "--- PASS: TestA (0.00s)\n    --- FAIL: TestA/sub_(x) (0.01s)\n--- SKIP: TestB (0.00s)\nok  \tpkg\t0.1s\n",
			want: sm{"TestA": logparse.PASSED, "TestA/sub_(x)": logparse.FAILED, "TestB": logparse.SKIPPED}},
		{name: "cargo", parser: "cargo",
			log:  "test a::b ... ok\ntest c ... FAILED\ntest d ... ignored\ntest result: ok. 1 passed\n",
			want: sm{"a::b": logparse.PASSED, "c": logparse.FAILED}},
		{name: "jest verbose", parser: "jest",
			log:  "  ✓ adds numbers (3 ms)\n  ✕ subtracts (12ms)\n  ○ skipped later\n    ✓ trailing space   \n",
			want: sm{"adds numbers": logparse.PASSED, "subtracts": logparse.FAILED, "skipped later": logparse.SKIPPED, "trailing space": logparse.PASSED}},
		{name: "vitest verbose", parser: "vitest",
			log:  " ✓ src/a.test.ts > adds 2ms\n × src/a.test.ts > breaks\n ↓ src/a.test.ts > later [skipped]\n",
			want: sm{"src/a.test.ts > adds": logparse.PASSED, "src/a.test.ts > breaks": logparse.FAILED, "src/a.test.ts > later": logparse.SKIPPED}},
		{name: "tap", parser: "tap",
			log:  "ok 1 first\nnot ok 2 second\nok 3 # skip\n",
			want: sm{"first": logparse.PASSED, "second": logparse.FAILED, "# skip": logparse.PASSED}},
		{name: "karma suites", parser: "karma",
			log:  "noise\nStarting browser ChromeHeadless\n  hooks\n    ✔ runs effect\n    ✖ cleans up\nSUMMARY:\n    ✔ after summary\n",
			want: sm{"hooks > runs effect": logparse.PASSED, "hooks > cleans up": logparse.FAILED}},
		{name: "marked failures", parser: "marked",
			log:  "  12 passing\n1) Marked Code spans should work\n",
			want: sm{"Marked Code spans should work": logparse.FAILED}},
		{name: "chart.js failures", parser: "chart_js",
			log:  "\x1b[31mChrome 120.0.0 (Linux x86_64) Chart.helpers works FAILED\x1b[39m\n",
			want: sm{"Chart.helpers works ": logparse.FAILED}},
		{name: "maven v5 pairs commands with build results in order", parser: "maven", rules: harness.V5,
			log:  "+ mvn test -Dtest=FooTest#a\n+ mvn test -Dtest=FooTest#b\n[INFO] BUILD SUCCESS\n[INFO] BUILD FAILURE\n",
			want: sm{"FooTest#a": logparse.PASSED, "FooTest#b": logparse.FAILED}},
		{name: "maven v4 gives each result to the latest command", parser: "maven", rules: harness.V4,
			log:  "+ mvn test -Dtest=FooTest#a\n+ mvn test -Dtest=FooTest#b\n[INFO] BUILD SUCCESS\n[INFO] BUILD FAILURE\n",
			want: sm{"FooTest#b": logparse.FAILED}},
		{name: "maven v5 keeps early results for later commands", parser: "maven", rules: harness.V5,
			log:  "[INFO] BUILD FAILURE\n+ mvn test -Dtest=FooTest#a\n+ mvn test -Dtest=FooTest#b\n",
			want: sm{"FooTest#a": logparse.FAILED}},
		{name: "gradle v5 name and status split by output", parser: "gradle_custom", rules: harness.V5,
			log:  "a.B > m1 PASSED\na.B > m2\nWARNING: x\nFAILED\n",
			want: sm{"a.B > m1": logparse.PASSED, "a.B > m2": logparse.FAILED}},
		{name: "gradle v4 reads only name and status on one line", parser: "gradle_custom", rules: harness.V4,
			log:  "a.B > m1 PASSED\na.B > m2\nWARNING: x\nFAILED\n",
			want: sm{"a.B > m1": logparse.PASSED}},
		{name: "calypso suites", parser: "calypso",
			log:  "x ./node_modules/.bin/jest a\n  Suite\n    ✓ does a (3ms)\n    ✕ does b\nTest Suites: 1\n",
			want: sm{"Suite - does a": logparse.PASSED, "Suite - does b": logparse.FAILED}},
		{name: "p5js failures", parser: "p5js",
			log:  "  1) Rendering\n       draws a line:\n     AssertionError\n{\n \"a\": 1\n}\n",
			want: sm{"Rendering:draws a line": logparse.FAILED}},
		// C and C++
		{name: "redis drops durations, and the file of failures only", parser: "redis",
			log:  "[ok]: SET and GET (2 ms)\n[err]: EXPIRE works in tests/unit/expire.tcl\n[skip]: DEBUG\n[ok]: SAVE in tests/x.tcl\n",
			want: sm{"SET and GET": logparse.PASSED, "EXPIRE works": logparse.FAILED, "DEBUG": logparse.SKIPPED, "SAVE in tests/x.tcl": logparse.PASSED}},
		{name: "jq pass and fail lines", parser: "jq",
			log:  "PASS: tests/mantest\n  FAIL: tests/jqtest\nPASS:tests/x\n",
			want: sm{"tests/mantest": logparse.PASSED, "tests/jqtest": logparse.FAILED}},
		{name: "micropython is case sensitive", parser: "micropython_test",
			log:  "pass  basics/int.py\nFAIL basics/str.py\nskip extmod/x.py\nPASS basics/y.py\n",
			want: sm{"basics/int.py": logparse.PASSED, "basics/str.py": logparse.FAILED, "extmod/x.py": logparse.SKIPPED}},
		{name: "googletest run and summary lines", parser: "googletest",
			log:  "[ RUN      ] FmtTest.Format\n[       OK ] FmtTest.Format (0 ms)\n[  FAILED  ] FmtTest.Bad (1 ms)\n[  FAILED  ] 1 test, listed below:\n",
			want: sm{"FmtTest.Format": logparse.PASSED, "FmtTest.Bad": logparse.FAILED}},
		{name: "doctest subcases pass when every expression succeeded", parser: "doctest",
			log: "[doctest] run\n<?xml version=\"1.0\"?>\n<doctest binary=\"t\">\n  <TestSuite>\n" +
				"    <TestCase name=\"parse\" filename=\"a.cpp\">\n      <SubCase name=\"empty\">\n        <Expression success=\"true\"/>\n      </SubCase>\n" +
				"      <SubCase name=\"bad\">\n        <Expression success=\"true\"/>\n        <SubCase name=\"inner\"><Expression success=\"false\"/></SubCase>\n      </SubCase>\n" +
				"      <SubCase name=\"none\"/>\n    </TestCase>\n    <TestCase><SubCase name=\"anon\"/></TestCase>\n  </TestSuite>\n</doctest>\ntrailing\n",
			want: sm{"parse > empty": logparse.PASSED, "parse > bad": logparse.FAILED, "parse > inner": logparse.FAILED,
				"parse > none": logparse.PASSED, "None > anon": logparse.PASSED}},
		{name: "doctest without xml", parser: "doctest", log: "[doctest] Status: SUCCESS!\n", want: sm{}},
		{name: "doctest raises without a closing tag", parser: "doctest",
			log: "<doctest binary=\"t\">\n<TestCase name=\"a\"/>\n", wantErr: true},
		{name: "doctest raises on malformed xml", parser: "doctest",
			log: "<doctest><TestCase name=a></TestCase></doctest>\n", wantErr: true},
		// PHP
		{name: "phpunit testdox suites prefix tests, lines unstripped", parser: "phpunit",
			log: " ✔ Orphan\nCalculator (Tests\\CalculatorTest)\n ✔ Adds numbers\n ✘ Divides by zero\n │ Failed asserting\n ↩ Skips\n  Indented (Not\\ASuite)\n ✔ After\n",
			want: sm{"None > Orphan": logparse.PASSED, "Calculator > Adds numbers": logparse.PASSED, "Calculator > Divides by zero": logparse.FAILED,
				"Calculator > Skips": logparse.SKIPPED, "Calculator > After": logparse.PASSED}},
		// Ruby
		{name: "minitest needs a dot and a space after the name", parser: "minitest",
			log:  "TestSite#test_build = 0.01 s = .\nTestFoo. test_x = F\nJekyll::Site. builds = 0.01 s = .\na. b=c E d\n",
			want: sm{"TestFoo": logparse.FAILED, "Jekyll::Site": logparse.PASSED, "a": logparse.FAILED}},
		{name: "cucumber progress", parser: "cucumber",
			log:  "Feature: build ....\nScenario x ...F\n",
			want: sm{"Feature: build": logparse.PASSED, "Scenario x": logparse.FAILED}},
		{name: "ruby_unit needs a word boundary after E, F and O", parser: "ruby_unit",
			log: "test: parse config: .\nTestA#test_b: F\ntest_c: Ok\ntest_d: O\ntest_e: E: .\ntest_f: Eé\ntest_g: E-\n",
			want: sm{"parse config": logparse.PASSED, "TestA#test_b": logparse.FAILED, "test_d": logparse.SKIPPED,
				"test_e: E": logparse.PASSED, "test_g": logparse.FAILED}},
		{name: "rspec transformed json takes the last separator", parser: "rspec_transformed_json",
			log:  "Foo - does x - passed\nFoo bar - failed\nFoo baz - pending\n",
			want: sm{"Foo - does x": logparse.PASSED, "Foo bar": logparse.FAILED}},
	}
	for _, tc := range cases {
		rules := []harness.Rules{tc.rules}
		if tc.rules == "" {
			rules = []harness.Rules{harness.V4, harness.V5}
		}
		for _, r := range rules {
			t.Run(tc.name+"/"+string(r), func(t *testing.T) {
				got, err := logparse.Parse(tc.parser, tc.log, r)
				if tc.wantErr {
					require.Error(t, err)
					assert.True(t, errors.Is(err, logparse.ErrParserRaised), err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			})
		}
	}
}

func TestLookup(t *testing.T) {
	type testCase struct {
		name, lookup, same string
		ok                 bool
	}
	for _, tc := range []testCase{
		{"canonical", "pytest_v2", "pytest_v2", true},
		{"official function name", "parse_log_pytest_v2", "pytest_v2", true},
		{"per-repository alias", "parse_log_astropy", "pytest_v2", true},
		{"official name without log_", "parse_plotly_js", "plotly_js", true},
		{"short alias", "requests", "pytest_options", true},
		{"unknown", "parse_log_nothing", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := logparse.Lookup(tc.lookup)
			require.Equal(t, tc.ok, ok)
			if !ok {
				_, err := logparse.Parse(tc.lookup, "", harness.V5)
				var unknown *logparse.UnknownParserError
				assert.ErrorAs(t, err, &unknown)
				return
			}
			// Same behaviour as the canonical parser on a log that tells
			// the parsers apart.
			log := "\x1b[32mPASSED\x1b[0m t.py::a[/x/y z]\nt.py::b PASSED\n"
			want, err := logparse.Parse(tc.same, log, harness.V5)
			require.NoError(t, err)
			got, err := p(log, harness.V5)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	assert.Contains(t, logparse.Names(), "django")
	assert.NotContains(t, logparse.Names(), "astropy")
}

func TestForRepo(t *testing.T) {
	type testCase struct{ repo, instance, want string }
	for _, tc := range []testCase{
		{"astropy/astropy", "", "pytest_v2"},
		{"django/django", "", "django"},
		{"psf/requests", "", "pytest_options"},
		{"mwaskom/seaborn", "", "seaborn"},
		{"sympy/sympy", "", "sympy"},
		{"matplotlib/matplotlib", "", "matplotlib"},
		{"pytest-dev/pytest", "", "pytest"},
		{"gin-gonic/gin", "", "gotest"},
		{"sharkdp/bat", "", "cargo"},
		{"vuejs/core", "", "vitest"},
		{"chartjs/Chart.js", "", "chart_js"},
		{"someone/unknown", "", "pytest"},
		{"immutable-js/immutable-js", "immutable-js__immutable-js-2006", "jest"},
		{"immutable-js/immutable-js", "immutable-js__immutable-js-2005", "jest_json"},
		{"immutable-js/immutable-js", "immutable-js__immutable-js-1", "immutable_js"},
		{"redis/redis", "", "redis"},
		{"valkey-io/valkey", "", "redis"},
		{"nlohmann/json", "", "doctest"},
		{"fmtlib/fmt", "", "googletest"},
		{"laravel/framework", "", "phpunit"},
		{"fluent/fluentd", "", "ruby_unit"},
		{"rubocop/rubocop", "", "rspec_transformed_json"},
		{"jekyll/jekyll", "jekyll__jekyll-9141", "minitest"},
		{"jekyll/jekyll", "jekyll__jekyll-8771", "cucumber"},
		{"jekyll/jekyll", "jekyll__jekyll-1", "jekyll"},
		{"jekyll/jekyll", "jekyll", "jekyll"},
	} {
		t.Run(tc.repo+tc.instance, func(t *testing.T) {
			got := harness.ParserForInstance(tc.repo, tc.instance)
			assert.Equal(t, tc.want, got)
			if got != "" {
				_, ok := logparse.Lookup(got)
				assert.True(t, ok, "ForRepo names a registered parser")
			}
		})
	}
}
