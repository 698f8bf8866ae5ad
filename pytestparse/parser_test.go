package pytestparse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sessionStart = "============================= test session starts ==============================\n"

// want is one expected test record; an empty id means "no test".
type want struct {
	id      string
	outcome Outcome
	message string
}

func testsOf(r *Report) []want {
	out := []want{}
	for _, t := range r.Tests {
		out = append(out, want{t.ID, t.Outcome, t.Message})
	}
	return out
}

func TestVerboseLines(t *testing.T) {
	type testCase struct {
		name string
		line string
		want []want
	}
	cases := []testCase{
		{"percentage", "tests/a.py::test_x PASSED                          [ 10%]", []want{{"tests/a.py::test_x", Passed, ""}}},
		{"count style", "tests/a.py::test_x FAILED                          [ 3/54]", []want{{"tests/a.py::test_x", Failed, ""}}},
		{"classic, no progress", "tests/a.py::test_x ERROR", []want{{"tests/a.py::test_x", Error, ""}}},
		{"class and params", "tests/a.py::TestC::test_x[1-2] PASSED [100%]", []want{{"tests/a.py::TestC::test_x[1-2]", Passed, ""}}},
		{"id with spaces and dash", "tests/a.py::test_x[a - b] PASSED [ 50%]", []want{{"tests/a.py::test_x[a - b]", Passed, ""}}},
		{"id containing PASSED", "tests/a.py::test_x[x PASSED y] FAILED [ 50%]", []want{{"tests/a.py::test_x[x PASSED y]", Failed, ""}}},
		{"id ending like a status line", "tests/a.py::test_x[ FAILED [ 50%]] PASSED [ 61%]", []want{{"tests/a.py::test_x[ FAILED [ 50%]]", Passed, ""}}},
		{"id containing a percentage", "tests/a.py::test_x[[100%]] PASSED", []want{{"tests/a.py::test_x[[100%]]", Passed, ""}}},
		{"id containing ::", "tests/a.py::test_x[x::y] PASSED [ 5%]", []want{{"tests/a.py::test_x[x::y]", Passed, ""}}},
		{"unicode", "tests/ünï.py::test_café[日本] PASSED [ 5%]", []want{{"tests/ünï.py::test_café[日本]", Passed, ""}}},
		{"skip reason", "tests/a.py::test_x SKIPPED (no network)                 [ 20%]", []want{{"tests/a.py::test_x", Skipped, "no network"}}},
		{"skip reason with parens and status words", "tests/a.py::test_x[a (b)] SKIPPED (skip (because) PASSED) [ 20%]", []want{{"tests/a.py::test_x[a (b)]", Skipped, "skip (because) PASSED"}}},
		{"xfail reason", "tests/a.py::test_x XFAIL (known bug)", []want{{"tests/a.py::test_x", XFailed, "known bug"}}},
		{"xpass reason", "tests/a.py::test_x XPASS (lucky) [ 1%]", []want{{"tests/a.py::test_x", XPassed, "lucky"}}},
		{"pytest 4 lower-case xfail", "tests/a.py::test_x xfail", []want{{"tests/a.py::test_x", XFailed, ""}}},
		{"-vv definition path", "tests/a.py::TestC::test_x <- tests/base.py PASSED [ 1%]", []want{{"tests/a.py::TestC::test_x", Passed, ""}}},
		{"arrow inside params is kept", "tests/a.py::test_x[a <- b.py] PASSED [ 1%]", []want{{"tests/a.py::test_x[a <- b.py]", Passed, ""}}},
		{"trailing space inside params", "tests/a.py::test_x[trailing ] PASSED [ 1%]", []want{{"tests/a.py::test_x[trailing ]", Passed, ""}}},
		{"doctest", "src/mod.py::mod.func PASSED [ 1%]", []want{{"src/mod.py::mod.func", Passed, ""}}},
		{"colours", "tests/a.py::test_x \x1b[32mPASSED\x1b[0m\x1b[32m     [ 10%]\x1b[0m", []want{{"tests/a.py::test_x", Passed, ""}}},
		{"xdist", "[gw3] [ 50%] XFAIL tests/a.py::test_x[a b] ", []want{{"tests/a.py::test_x[a b]", XFailed, ""}}},
		{"xdist classic", "[gw0] PASSED tests/a.py::test_x <- tests/base.py ", []want{{"tests/a.py::test_x", Passed, ""}}},
		{"xdist noise", "[gw1] linux -- Python 3.11.2 /usr/bin/python3", []want{}},
		{"name with a space is output", "tests/a.py::test_x hello PASSED", []want{}},
		{"unbalanced id is output", "tests/a.py::test_x[a PASSED", []want{}},
		{"status word followed by text", "tests/a.py::test_x PASSED for real", []want{}},
		{"summary form is output while tests run", "PASSED tests/a.py::test_x", []want{}},
		{"no path", "test_x PASSED [ 5%]", []want{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseString(sessionStart + tc.line + "\n")
			assert.Equal(t, tc.want, testsOf(r))
		})
	}
}

func TestSummaryLines(t *testing.T) {
	const header = "=========================== short test summary info ============================\n"
	type testCase struct {
		name  string
		lines string
		want  []want
	}
	cases := []testCase{
		{"passed", "PASSED tests/a.py::test_x[a - b]", []want{{"tests/a.py::test_x[a - b]", Passed, ""}}},
		{"passed id that looks split", "PASSED tests/a.py::test_x[x] - [y]", []want{{"tests/a.py::test_x[x] - [y]", Passed, ""}}},
		{"failed with message", "FAILED tests/a.py::test_x - assert 1 == 2", []want{{"tests/a.py::test_x", Failed, "assert 1 == 2"}}},
		{"failed, dash in id", "FAILED tests/a.py::test_x[a - b] - AssertionError: a - b", []want{{"tests/a.py::test_x[a - b]", Failed, "AssertionError: a - b"}}},
		{"failed, bracket and dash in id", "FAILED tests/a.py::test_x[x] - [y] - AssertionError: ass...", []want{{"tests/a.py::test_x[x] - [y]", Failed, "AssertionError: ass..."}}},
		{"failed without message", "FAILED tests/a.py::test_x[a - b]", []want{{"tests/a.py::test_x[a - b]", Failed, ""}}},
		{"pytest 3 FAIL", "FAIL tests/a.py::test_x", []want{{"tests/a.py::test_x", Failed, ""}}},
		{"error", "ERROR tests/a.py::test_x - RuntimeError: boom", []want{{"tests/a.py::test_x", Error, "RuntimeError: boom"}}},
		{"xfail pytest 7.2+", "XFAIL tests/a.py::test_x - reason: flaky", []want{{"tests/a.py::test_x", XFailed, "reason: flaky"}}},
		{"xfail with indented reason", "XFAIL tests/a.py::test_x\n  reason: flaky", []want{{"tests/a.py::test_x", XFailed, "reason: flaky"}}},
		{"xpass pytest 7", "XPASS tests/a.py::test_x[a - b] fixed - maybe", []want{{"tests/a.py::test_x[a - b]", XPassed, "fixed - maybe"}}},
		{"xpass pytest 8", "XPASS tests/a.py::test_x - fixed", []want{{"tests/a.py::test_x", XPassed, "fixed"}}},
		{"skipped unfolded", "SKIPPED tests/a.py::test_x - no db", []want{{"tests/a.py::test_x", Skipped, "no db"}}},
		{"skipped folded is no test", "SKIPPED [3] tests/a.py:12: no db", []want{}},
		{"collection error", "ERROR tests/broken.py", []want{{"tests/broken.py", Error, ""}}},
		{"collection error with message", "ERROR tests/broken.py - ImportError: no", []want{{"tests/broken.py", Error, "ImportError: no"}}},
		{"multi-line message", "FAILED tests/a.py::test_x - AssertionError: one\ntwo\n  three", []want{{"tests/a.py::test_x", Failed, "AssertionError: one\ntwo\n  three"}}},
		{"colours", "\x1b[31mFAILED\x1b[0m tests/a.py::\x1b[1mtest_x\x1b[0m - assert 0", []want{{"tests/a.py::test_x", Failed, "assert 0"}}},
		{"CRLF", "FAILED tests/a.py::test_x - assert 0\r\nPASSED tests/a.py::test_y\r", []want{{"tests/a.py::test_x", Failed, "assert 0"}, {"tests/a.py::test_y", Passed, ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseString(sessionStart + header + tc.lines + "\n")
			assert.Equal(t, tc.want, testsOf(r))
		})
	}
}

func TestSummaryLineUsesKnownIDs(t *testing.T) {
	// Without the verbose line the leftmost id-shaped split would win.
	log := sessionStart +
		"tests/a.py::test_x[x] - [y] FAILED [100%]\n" +
		"=========================== short test summary info ============================\n" +
		"FAILED tests/a.py::test_x[x] - [y] - [z]\n"
	r := ParseString(log)
	assert.Equal(t, []want{{"tests/a.py::test_x[x] - [y]", Failed, "[z]"}}, testsOf(r))
}

func TestSkipGroups(t *testing.T) {
	r := ParseString(sessionStart + "=========================== short test summary info ============================\n" +
		"SKIPPED [2] tests/a.py:12: needs: network\nSKIP [1] tests/b.py: module skip\n")
	assert.Equal(t, []SkipGroup{
		{Count: 2, Location: "tests/a.py:12", Reason: "needs: network", Line: 3},
		{Count: 1, Location: "tests/b.py", Reason: "module skip", Line: 4},
	}, r.SkipGroups)
}

func TestClosingLine(t *testing.T) {
	type testCase struct {
		name string
		line string
		want Summary
		ok   bool
	}
	cases := []testCase{
		{"all kinds", "= 12 failed, 31 passed, 5 skipped, 3 xfailed, 2 xpassed, 1 warning, 3 errors in 0.15s =",
			Summary{Failed: 12, Passed: 31, Skipped: 5, XFailed: 3, XPassed: 2, Warnings: 1, Errors: 3, Duration: "0.15s", Seen: true}, true},
		{"singular error", "=== 1 error in 0.01s ===", Summary{Errors: 1, Duration: "0.01s", Seen: true}, true},
		{"order and plurals", "==== 2 warnings, 1 passed, 4 deselected, 2 rerun in 1.00s ====",
			Summary{Warnings: 2, Passed: 1, Deselected: 4, Rerun: 2, Duration: "1.00s", Seen: true}, true},
		{"long run", "==== 3 passed in 75.20s (0:01:15) ====", Summary{Passed: 3, Duration: "75.20s (0:01:15)", Seen: true}, true},
		{"pytest 4 seconds", "==== 3 passed in 0.12 seconds ====", Summary{Passed: 3, Duration: "0.12 seconds", Seen: true}, true},
		{"no tests ran", "==== no tests ran in 0.01s ====", Summary{Duration: "0.01s", Seen: true}, true},
		{"-q without fill", "1 failed, 2 passed in 0.04s", Summary{Failed: 1, Passed: 2, Duration: "0.04s", Seen: true}, true},
		{"unknown noun", "==== 2 tests collected in 0.01s ====", Summary{Other: map[string]int{"tests collected": 2}, Duration: "0.01s", Seen: true}, true},
		{"colours", "\x1b[31m= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m\x1b[31m in 0.17s\x1b[0m\x1b[31m =\x1b[0m",
			Summary{Failed: 1, Passed: 1, Duration: "0.17s", Seen: true}, true},
		{"not a count", "==== many passed in 0.1s ====", Summary{}, false},
		{"no duration", "==== 1 passed ====", Summary{}, false},
		{"prose", "2 things happened in the meantime", Summary{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseString(tc.line + "\n")
			if !tc.ok {
				assert.False(t, r.Summary.Seen)
				return
			}
			tc.want.Line = 1
			assert.Equal(t, tc.want, r.Summary)
		})
	}
}

func TestPrecedence(t *testing.T) {
	const summary = "=========================== short test summary info ============================\n"
	type testCase struct {
		name     string
		log      string
		outcome  Outcome
		reported []Outcome
		message  string
		source   Source
	}
	cases := []testCase{
		{"error at teardown after a pass is an error",
			"t.py::x PASSED [ 50%]\nt.py::x ERROR [ 50%]\n", Error, []Outcome{Passed, Error}, "", SourceVerbose},
		{"error at teardown after a failure stays a failure",
			"t.py::x FAILED [ 50%]\nt.py::x ERROR [ 50%]\n" + summary + "ERROR t.py::x - RuntimeError: td\nFAILED t.py::x - assert 0\n",
			Failed, []Outcome{Failed, Error}, "assert 0", SourceSummary},
		{"summary line beats verbose line for the message",
			"t.py::x SKIPPED (short...) [ 50%]\n" + summary + "SKIPPED t.py::x - the whole reason\n",
			Skipped, []Outcome{Skipped}, "the whole reason", SourceSummary},
		{"verbose reason kept when the summary has none",
			"t.py::x XFAIL (flaky) [ 50%]\n" + summary + "XFAIL t.py::x\n",
			XFailed, []Outcome{XFailed}, "flaky", SourceSummary},
		{"a later session cannot hide a failure",
			"t.py::x FAILED [100%]\n==== 1 failed in 0.1s ====\n" + sessionStart + "t.py::x PASSED [100%]\n",
			Failed, []Outcome{Passed, Failed}, "", SourceVerbose},
		{"xpass beats pass",
			"t.py::x PASSED [100%]\n" + summary + "XPASS t.py::x lucky\n", XPassed, []Outcome{Passed, XPassed}, "lucky", SourceSummary},
		{"pass beats skip and xfail",
			"t.py::x SKIPPED [ 50%]\nt.py::x XFAIL [ 50%]\nt.py::x PASSED [100%]\n", Passed, []Outcome{Passed, Skipped, XFailed}, "", SourceVerbose},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseString(sessionStart + tc.log)
			require.Len(t, r.Tests, 1)
			got := r.Tests[0]
			assert.Equal(t, tc.outcome, got.Outcome)
			assert.Equal(t, tc.reported, got.Reported.Outcomes())
			assert.Equal(t, tc.message, got.Message)
			assert.Equal(t, tc.source, got.Source)
		})
	}
}

func TestCapturedOutputIsNotATest(t *testing.T) {
	log := sessionStart +
		"t.py::test_real PASSED [100%]\n" +
		"==================================== PASSES ====================================\n" +
		"__________________________________ test_real ___________________________________\n" +
		"----------------------------- Captured stdout call -----------------------------\n" +
		"PASSED t.py::fake_one\n" +
		"t.py::fake_two FAILED [ 50%]\n" +
		"[gw0] [ 50%] ERROR t.py::fake_three\n" +
		"!!!!!!!!!!!!!!!!!!!!!!! printed bangs !!!!!!!!!!!!!!!!!!!!!!!!\n" +
		"============================= test session starts ==============================\n" +
		"=========================== short test summary info ============================\n" +
		"FAILED t.py::fake_four - inner\n" +
		"============================== 1 failed in 0.01s ===============================\n" +
		"XPASS t.py::fake_five after the inner session\n" +
		"=========================== short test summary info ============================\n" +
		"PASSED t.py::test_real\n" +
		"============================== 1 passed in 0.01s ===============================\n"
	r := ParseString(log)
	assert.Equal(t, []want{{"t.py::test_real", Passed, ""}}, testsOf(r))
	assert.Equal(t, 1, r.Summary.Passed)
	assert.False(t, r.Interrupted)
}

func TestPrintedSummaryHeader(t *testing.T) {
	// A test printed the summary header itself (not a whole inner session):
	// the next section or captured-output header shows it was output.
	log := sessionStart +
		"t.py::test_real FAILED [100%]\n" +
		"=================================== FAILURES ===================================\n" +
		"__________________________________ test_real ___________________________________\n" +
		"----------------------------- Captured stdout call -----------------------------\n" +
		"=========================== short test summary info ============================\n" +
		"----------------------------- Captured stderr call -----------------------------\n" +
		"FAILED t.py::fake - printed\n" +
		"=========================== short test summary info ============================\n" +
		"FAILED t.py::test_real - assert 0\n" +
		"============================== 1 failed in 0.01s ===============================\n"
	r := ParseString(log)
	assert.Equal(t, []want{{"t.py::test_real", Failed, "assert 0"}}, testsOf(r))
}

func TestLogWithoutStructure(t *testing.T) {
	// No session header (pytest -q, or a log that is mostly something else):
	// summary-form lines count only when they name a node id or a module.
	log := "+ pip install -e .\nERROR Could not install packages\nPASSED tests/a.py::test_x\nERROR tests/broken.py\nt.py::test_y PASSED [100%]\n"
	r := ParseString(log)
	assert.Equal(t, []want{{"tests/a.py::test_x", Passed, ""}, {"tests/broken.py", Error, ""}, {"t.py::test_y", Passed, ""}}, testsOf(r))
	assert.Equal(t, []string{"+ pip install -e .", "ERROR Could not install packages"}, r.Unparsed)
	assert.Equal(t, []string{"tests/broken.py"}, r.CollectionErrors)
}

func TestSOutput(t *testing.T) {
	type testCase struct {
		name       string
		log        string
		want       []want
		unfinished []string
	}
	cases := []testCase{
		{"output then bare status", "t.py::a hello\nPASSED t.py::fake\nt.py::fake FAILED [ 9%]\nPASSED     [ 50%]\nt.py::b PASSED [100%]\n",
			[]want{{"t.py::a", Passed, ""}, {"t.py::b", Passed, ""}}, nil},
		{"status glued to output", "t.py::a no newlinePASSED    [ 50%]\n", []want{{"t.py::a", Passed, ""}}, nil},
		{"bare skip with reason", "t.py::a output\nSKIPPED (not now) [ 50%]\n", []want{{"t.py::a", Skipped, "not now"}}, nil},
		{"a section ends a test that never finished", "t.py::a \n=================================== FAILURES ===================================\n",
			[]want{}, []string{"t.py::a"}},
		{"inner session is output when the status follows", "t.py::a " + sessionStart + "t.py::inner PASSED [100%]\n==== 1 passed in 0.01s ====\n\nFAILED\n",
			[]want{{"t.py::a", Failed, ""}}, nil},
		{"a new run after a killed test counts", "t.py::a " + sessionStart + "t.py::a PASSED [ 50%]\nt.py::b PASSED [100%]\n==== 2 passed in 0.01s ====\n+ echo done\n",
			[]want{{"t.py::a", Passed, ""}, {"t.py::b", Passed, ""}}, nil},
		{"the start line printed again with its status", "t.py::a[0] \nt.py::a[0] PASSED [ 50%]\nt.py::b FAILED [100%]\n",
			[]want{{"t.py::a[0]", Passed, ""}, {"t.py::b", Failed, ""}}, nil},
		{"a new run cut off counts too", "t.py::a " + sessionStart + "t.py::b FAILED [ 50%]\n",
			[]want{{"t.py::b", Failed, ""}}, []string{"t.py::a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseString(sessionStart + tc.log)
			assert.Equal(t, tc.want, testsOf(r))
			assert.Equal(t, tc.unfinished, r.Unfinished)
		})
	}
}

func TestLongLines(t *testing.T) {
	param := strings.Repeat("x - PASSED [ 50%] ", 1<<18) // 4.5 MiB
	id := "tests/a.py::test_long[" + param + "]"
	log := sessionStart + id + " FAILED [100%]\n" +
		"=========================== short test summary info ============================\n" +
		"FAILED " + id + " - AssertionError: long\n" +
		strings.Repeat("z", 3<<20) + "\n" +
		"==== 1 failed in 0.1s ====\n"
	r, err := Parse(iotest.HalfReader(strings.NewReader(log)))
	require.NoError(t, err)
	require.Len(t, r.Tests, 1)
	assert.Equal(t, id, r.Tests[0].ID)
	assert.Equal(t, "AssertionError: long", r.Tests[0].Message, "a continuation past the message cap is dropped")
	assert.Equal(t, 1, r.Summary.Failed)
	assert.Equal(t, 6, r.Lines)
}

func TestChunkingDoesNotMatter(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "captures", "*.txt"))
	require.NoError(t, err)
	hand, err := filepath.Glob(filepath.Join("testdata", "handmade", "*.log"))
	require.NoError(t, err)
	for _, path := range append(paths, hand...) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		whole := ParseBytes(data)
		for _, size := range []int{1, 3, 64, 4096} {
			p, err := New()
			require.NoError(t, err)
			for b := data; len(b) > 0; {
				n := min(size, len(b))
				p.Write(b[:n])
				b = b[n:]
			}
			require.NoError(t, p.Close())
			require.Equal(t, whole, p.Report(), "%s in chunks of %d", path, size)
		}
		require.Equal(t, whole, ParseString(string(data)), path)
		fromReader, err := Parse(iotest.OneByteReader(bytes.NewReader(data)))
		require.NoError(t, err)
		require.Equal(t, whole, fromReader, path)
	}
}

func TestParseReadError(t *testing.T) {
	boom := errors.New("boom")
	r, err := Parse(io.MultiReader(strings.NewReader(sessionStart+"t.py::a PASSED [ 50%]\nt.py::b FAI"), iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	require.NotNil(t, r)
	assert.Equal(t, []want{{"t.py::a", Passed, ""}}, testsOf(r))
	assert.Equal(t, 3, r.Lines, "the cut line is still read")
}

func TestReportIsASnapshot(t *testing.T) {
	p, err := New()
	require.NoError(t, err)
	p.Write([]byte(sessionStart + "t.py::a PASSED [ 50%]\n"))
	first := p.Report()
	p.Write([]byte("t.py::a ERROR [ 50%]\nt.py::b PASSED [100%]\n"))
	second := p.Report()
	assert.Equal(t, []want{{"t.py::a", Passed, ""}}, testsOf(first))
	assert.Equal(t, []want{{"t.py::a", Error, ""}, {"t.py::b", Passed, ""}}, testsOf(second))
}

func TestUnterminatedLineNeedsClose(t *testing.T) {
	p, err := New()
	require.NoError(t, err)
	p.Write([]byte(sessionStart + "t.py::a PASSED [100%]"))
	assert.Empty(t, p.Report().Tests)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	assert.Len(t, p.Report().Tests, 1)
}

func TestOptions(t *testing.T) {
	_, err := New(WithMaxUnparsed(-1))
	require.ErrorIs(t, err, ErrInvalidOption)
	r, err := Parse(strings.NewReader("one\ntwo\nthree\n"+strings.Repeat("é", maxUnparsedLine)+"\n"), WithMaxUnparsed(2))
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, r.Unparsed)
	assert.Equal(t, 2, r.UnparsedDropped)
	r, err = Parse(strings.NewReader(strings.Repeat("é", maxUnparsedLine)+"\n"), WithMaxUnparsed(1))
	require.NoError(t, err)
	require.Len(t, r.Unparsed, 1)
	assert.LessOrEqual(t, len(r.Unparsed[0]), maxUnparsedLine)
	assert.True(t, strings.HasSuffix(r.Unparsed[0], "é"), "cut on a character boundary")
}

func TestOutcomeText(t *testing.T) {
	for _, o := range Outcomes() {
		b, err := o.MarshalText()
		require.NoError(t, err)
		var back Outcome
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, o, back)
	}
	_, err := Outcome(0).MarshalText()
	require.ErrorIs(t, err, ErrUnknownOutcome)
	for word, o := range map[string]Outcome{"PASSED": Passed, "XFAIL": XFailed, "XPASS": XPassed, "errors": Error} {
		got, err := ParseOutcome(word)
		require.NoError(t, err)
		assert.Equal(t, o, got)
	}
	_, err = ParseOutcome("RERUN")
	require.ErrorIs(t, err, ErrUnknownOutcome)

	set := OutcomeSet(0).With(Error).With(Passed)
	b, err := set.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "passed+error", string(b))
	var back OutcomeSet
	require.NoError(t, back.UnmarshalText(b))
	assert.Equal(t, set, back)
	assert.Equal(t, 2, back.Len())
	assert.Equal(t, "unknown", Source(0).String())
	var src Source
	require.NoError(t, src.UnmarshalText([]byte("xdist")))
	assert.Equal(t, SourceXdist, src)
	require.Error(t, src.UnmarshalText([]byte("unknown")))
}

func TestReruns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "handmade", "rerunfailures.log"))
	require.NoError(t, err)
	r := ParseBytes(data)
	total := 0
	for _, tc := range r.Tests {
		total += tc.Reruns
	}
	assert.Equal(t, r.Summary.Rerun, total, "RERUN lines of the verbose run and the rerun summary are the same reports")
	assert.Equal(t, 2, mustTest(t, r, "tests/test_flaky.py::test_flaky").Reruns)
}
