package logparse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// fragments are the pieces generated logs are made of: every token some
// official rule reacts to, Python-only whitespace, non-ASCII digits, ANSI
// codes and the like.
var fragments = []string{
	"PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "XPASS", "PASSEDX", " PASSED ",
	" ", "  ", "\t", "\r", "\x1c", "\x1f", "\u00a0", "\u2003", "\u3000", "\x0b",
	" - ", " -", "- ", " ... ", "...", " ... ok", " ... OK", " ...  OK", " ... skipped 'x'", " ... FAIL", " ... ERROR",
	"ok", "OK", "FAIL:", "ERROR:", "[", "]", "[1]", "[12]", "[100%]", "[\u0663]", "/", "//", "*", "a", "b", "test_x",
	"t.py::test_a", "t.py::test_b[a b]", "t.py::test_c[/tmp/x/y]", "\x1b[32m", "\x1b[0m", "[1m", "\x1b[1;31m",
	"MouseButton.LEFT", "MouseButton.RIGHT", "(", ")", "(3 ms)", "(12ms)", "2ms", "[skipped]", ":", ".py:", "_", "___",
	"✓", "✕", "○", "×", "↓", "✔", "✖", "--- PASS: ", "--- FAIL: ", "--- SKIP: ", "(0.00s)", "test ", "ok ", "not ok ",
	"1) ", "12) ", "Starting browser", "SUMMARY:", "Chrome 12.0 (Linux) ", " ./node_modules/.bin/jest ", "Test Suites",
	"  ● ", "<a>", "</a>", "<ab>", "</ab>", "{", "}", "-Dtest=Foo#x ", "BUILD SUCCESS", "BUILD FAILURE", "[junit] [PASS] ",
	"[junit] [ERR] ", " > ", "System check identified no issues (0 silenced)", "Internal Server Error: /", "/\nok",
	"Testing against Django installed in ", " silenced).", "\nok", "Applying sites.0002_alter_domain_unique...test_no_migrations",
	"--version is equivalent to version", "é", "ü", "日本", "\u0085", "\u2028", "[PASSED] ", "[FAILED] ",
	"[ok]: ", "[err]: ", "[skip]: ", "[ignore]: ", " in tests/unit/x.tcl", " (12 ms)", "PASS: ", "FAIL: ", "pass ", "skip ",
	"[       OK ] ", "[  FAILED  ] ", "S.t", "(0 ms)", "✘", "↩", "Suite (App\\SuiteTest)", "=", " = 0.00 s = ", ".",
	"F", "E", "O", "Ex", "test: ", " - passed", " - failed", "..", " .", "<doctest>", "</doctest>",
	"<doctest binary=\"t\">", "<TestCase name=\"c\">", "<TestCase>", "</TestCase>", "<SubCase name=\"s\">",
	"<SubCase>", "</SubCase>", "<Expression success=\"true\"/>", "<Expression success=\"false\"/>", "<OverallResults/>",
	// the JavaScript parsers of 5.0.2
	"3 passing", "\n  2 passing", "(12ms)", "2KPhantomJS 2.1.1 (Linux 0.0.0) ", "2KPhantomJS 2.1.1 (Linux x86_64) ",
	"Chrome Headless 120.0 (Linux x86_64) ", "HeadlessChrome 120.0 (Linux 0.0.0) ", "Chrome 120.0 (Linux x86_64) ",
	" FAILED\n", "Error", "Error:", "AssertionError: ", "case x: mismatch", "PASS ", "FAIL ", "(1.2 s)", "(3 ms)", "✗",
	" xvfb-run ", "Starting browser Chrome", "TOTAL", "WARN", "LOG", "in ", "Running: a.js (1 of 2)\n\n\n  Suite\n",
	"    ", "    1) ", "    ✓ ", "../..", "  \"passes\": [", "  \"failures\": [", "  }", "  ],", "\"fullTitle\": \"t\",\n",
	"running 2 test files", "2 passing", "✔ ", "[smoke]", "[unit]", " ... ", "\x1b[32mok", "\x1b[31mFAILED", "34mINFO",
	"test result:", "/tmp/ab.qmd", "/tmp/cd/", "ERRORS", "failures:", "passed failed steps",
	"./node_modules/.bin/mocha tests/run.js --reporter json", "./node_modules/.bin/mocha --reporter json",
	"{\"passes\": [], \"failures\": [{\"fullTitle\": \"f\"}]}", "\"passes\": [", "\"failures\": [", "],",
	" - ", " :", "   * ", " : ok", " : FAILED", "\x1b[32mok\x1b[39m", "  - Plotly.react :", "     * works : ok", "Suites and tests results:\n\n",
	"    ✓ t (1ms)", "    2) t", "test a::b ... ok", "test a::c ... FAILED", "ok 1 t", "not ok 2 u",
	"<doctest binary=\"t\"><TestCase name=\"c\"><SubCase name=\"s\"><Expression success=\"true\"/></SubCase></TestCase></doctest>",
}

func randomLog(r *rand.Rand) string {
	var b strings.Builder
	for range r.Intn(14) + 1 {
		for range r.Intn(9) {
			b.WriteString(fragments[r.Intn(len(fragments))])
		}
		b.WriteString("\n")
	}
	return b.String()
}

type diffCase struct {
	Parser string      `json:"parser"`
	Rules  string      `json:"rules"`
	Log    string      `json:"log"`
	Target *diffTarget `json:"target,omitempty"`
}

type diffTarget struct {
	InstanceID string `json:"instance_id"`
	Version    string `json:"version"`
}

// dispatchTargets are instances and versions that take every branch of the
// dispatching parsers.
var dispatchTargets = map[string][]diffTarget{
	"immutable_js": {{InstanceID: "immutable-js__immutable-js-2006"}, {InstanceID: "immutable-js__immutable-js-2005"}, {InstanceID: "immutable-js__immutable-js-1"}},
	"jekyll":       {{InstanceID: "jekyll__jekyll-9141"}, {InstanceID: "jekyll__jekyll-8771"}, {InstanceID: "jekyll__jekyll-1"}, {InstanceID: "jekyll"}},
	"next":         {{Version: "1.27"}, {Version: "1.26"}},
	"lighthouse":   {{Version: "9.5"}, {Version: "10.0"}, {Version: "3"}, {Version: "2.9"}, {Version: " 1_0 "}, {Version: "x"}},
}

type diffResult struct {
	Map   map[string]string `json:"map"`
	Error string            `json:"error"`
}

// TestDifferentialPython runs every parser on generated logs and on the
// real captures, and compares with testdata/official.py, the same rules run
// by Python itself. It is skipped where python3 is missing.
func TestDifferentialPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		cienv.Skip(t, "python3 not found: differential test against the Python rules skipped")
	}
	r := rand.New(rand.NewSource(4))
	var logs []string
	for range 400 {
		logs = append(logs, randomLog(r))
	}
	captures, err := filepath.Glob("testdata/captures/*.log")
	require.NoError(t, err)
	jsLogs, err := filepath.Glob("testdata/js/*.log")
	require.NoError(t, err)
	captures = append(captures, jsLogs...)
	for _, path := range captures {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		logs = append(logs, string(raw))
	}
	var cases []diffCase
	for _, name := range logparse.Names() {
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			for _, log := range logs {
				cases = append(cases, diffCase{Parser: name, Rules: string(rules), Log: log})
				for _, target := range dispatchTargets[name] {
					cases = append(cases, diffCase{Parser: name, Rules: string(rules), Log: log, Target: &target})
				}
			}
		}
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	cmd := exec.Command(python, "testdata/official.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var want []diffResult
	require.NoError(t, json.Unmarshal(out, &want))
	require.Len(t, want, len(cases))

	mismatches := 0
	recorded := map[string]int{}
	for i, c := range cases {
		if len(want[i].Map) > 0 {
			recorded[c.Parser]++
		}
		var target logparse.Target
		if c.Target != nil {
			target = logparse.Target{InstanceID: c.Target.InstanceID, Version: c.Target.Version}
		}
		got, err := logparse.ParseTarget(c.Parser, c.Log, harness.Rules(c.Rules), target)
		if want[i].Error != "" {
			if !errors.Is(err, logparse.ErrParserRaised) {
				mismatches++
				assert.Failf(t, "Python raised, Go did not", "%s/%s %s: %q", c.Parser, c.Rules, want[i].Error, c.Log)
			}
			continue
		}
		if !assert.NoError(t, err, "%s/%s on %q", c.Parser, c.Rules, c.Log) {
			mismatches++
			continue
		}
		gotMap := map[string]string{}
		for k, v := range got {
			gotMap[k] = string(v)
		}
		if !assert.Equal(t, want[i].Map, gotMap, "%s/%s on %q", c.Parser, c.Rules, c.Log) {
			mismatches++
		}
		if mismatches > 10 {
			t.Fatal("too many mismatches")
		}
	}
	for _, name := range logparse.Names() {
		assert.Positive(t, recorded[name], "no generated log gives %s a test: the comparison says nothing about it", name)
	}
	t.Logf("%d cases compared with Python; tests recorded per parser: %v", len(cases), recorded)
}
