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
	Parser string `json:"parser"`
	Rules  string `json:"rules"`
	Log    string `json:"log"`
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
		t.Skip("python3 not found: differential test against the Python rules skipped")
	}
	r := rand.New(rand.NewSource(4))
	var logs []string
	for range 400 {
		logs = append(logs, randomLog(r))
	}
	captures, err := filepath.Glob("testdata/captures/*.log")
	require.NoError(t, err)
	for _, path := range captures {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		logs = append(logs, string(raw))
	}
	var cases []diffCase
	for _, name := range logparse.Names() {
		for _, rules := range []logparse.Rules{logparse.V4, logparse.V5} {
			for _, log := range logs {
				cases = append(cases, diffCase{name, string(rules), log})
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
	for i, c := range cases {
		got, err := logparse.Parse(c.Parser, c.Log, logparse.Rules(c.Rules))
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
	t.Logf("%d cases compared with Python", len(cases))
}
