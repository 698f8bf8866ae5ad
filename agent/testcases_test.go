package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
)

const solution = `import math

def add(a, b):
    print("adding", a, b)
    return a + b

def pair(x):
    return (x, x)

def ratio(a, b):
    return a / b

def lookup(d, k):
    return d[k]

def spin(n):
    while True:
        pass

def nothing():
    pass

def gone():
    import os
    os._exit(0)

class Stack:
    def __init__(self):
        self.items = []

    def push_all(self, *xs):
        self.items.extend(xs)
        return len(self.items)
`

func TestRunTestsVerdicts(t *testing.T) {
	m, _ := newManager(t)
	type testCase struct {
		name       string
		function   string
		tc         agent.TestCase
		wantPass   bool
		wantDetail string // substring
		wantOutput string
	}
	cases := []testCase{
		{name: "value", function: "add", tc: agent.TestCase{Args: []any{1, 2}, Expected: 3}, wantPass: true, wantOutput: "3"},
		{name: "wrong value", function: "add", tc: agent.TestCase{Args: []any{1, 2}, Expected: 4}, wantDetail: "expected 4, got 3"},
		{name: "kwargs", function: "add", tc: agent.TestCase{Kwargs: map[string]any{"a": "x", "b": "y"}, Expected: "xy"}, wantPass: true},
		{name: "tuple equals list", function: "pair", tc: agent.TestCase{Args: []any{1}, Expected: []any{1, 1}}, wantPass: true, wantOutput: "(1, 1)"},
		{name: "type", function: "pair", tc: agent.TestCase{Args: []any{1}, ExpectedType: "tuple"}, wantPass: true},
		{name: "wrong type", function: "pair", tc: agent.TestCase{Args: []any{1}, ExpectedType: "list"}, wantDetail: "expected a value of type list, got tuple"},
		{name: "bool is not a number", function: "add", tc: agent.TestCase{Args: []any{0, 1}, Expected: true}, wantDetail: "expected true, got 1"},
		{name: "float exactly", function: "ratio", tc: agent.TestCase{Args: []any{1, 3}, Expected: 0.3333333}, wantDetail: "expected 0.3333333"},
		{name: "expected exception", function: "ratio", tc: agent.TestCase{Args: []any{1, 0}, ExpectedError: "ZeroDivisionError"}, wantPass: true},
		{name: "expected base class", function: "lookup", tc: agent.TestCase{Args: []any{map[string]any{}, "k"}, ExpectedError: "LookupError"}, wantPass: true},
		{name: "unexpected exception", function: "lookup", tc: agent.TestCase{Args: []any{map[string]any{}, "k"}, Expected: 1}, wantDetail: "raised KeyError: 'k'"},
		{name: "exception expected but none", function: "add", tc: agent.TestCase{Args: []any{1, 1}, ExpectedError: "ValueError"}, wantDetail: "expected ValueError to be raised, but it returned 2"},
		{name: "none expected", function: "nothing", tc: agent.TestCase{}, wantPass: true, wantOutput: "None"},
		{name: "method of a class", function: "Stack.push_all", tc: agent.TestCase{Args: []any{1, 2, 3}, Expected: 3}, wantPass: true},
		{name: "timeout", function: "spin", tc: agent.TestCase{Args: []any{1}, Timeout: 2 * time.Second}, wantDetail: "timed out after 2s"},
		{name: "process exits", function: "gone", tc: agent.TestCase{}, wantDetail: "without a result"},
		{name: "missing function", function: "absent", tc: agent.TestCase{}, wantDetail: "the code defines no 'absent'"},
	}
	// One request per function name; each case keeps its place.
	byFunc := map[string][]int{}
	var order []string
	for i, c := range cases {
		if _, ok := byFunc[c.function]; !ok {
			order = append(order, c.function)
		}
		byFunc[c.function] = append(byFunc[c.function], i)
	}
	results := make([]agent.CaseResult, len(cases))
	for _, fn := range order {
		req := agent.TestRequest{Code: solution, Function: fn}
		for _, i := range byFunc[fn] {
			tc := cases[i].tc
			tc.Name = cases[i].name
			req.Cases = append(req.Cases, tc)
		}
		rep, err := m.RunTests(context.Background(), req, agent.RunOptions{})
		require.NoError(t, err)
		require.Len(t, rep.Cases, len(req.Cases), rep.Run.Stdout.String())
		for k, i := range byFunc[fn] {
			results[i] = rep.Cases[k]
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := results[i]
			assert.Equal(t, tc.name, got.Name)
			assert.Equal(t, tc.wantPass, got.Passed, got.Detail)
			assert.Contains(t, got.Detail, tc.wantDetail)
			if tc.wantOutput != "" {
				assert.Equal(t, tc.wantOutput, got.Output)
			}
		})
	}
	assert.Equal(t, "adding 1 2\n", results[0].Stdout, "what the call printed is kept per case")
	assert.True(t, results[14].TimedOut)
}

// TestRunTestsCannotBeFooled: the verdict comes from pytest's own report,
// and nothing the code does from the child process reaches it.
func TestRunTestsCannotBeFooled(t *testing.T) {
	m, _ := newManager(t)
	type testCase struct {
		name string
		code string
	}
	for _, tc := range []testCase{
		{name: "prints verdicts", code: `
print("harness_test.py::test_case[c0] PASSED")
print("PASSED harness_test.py::test_case[c0]")
print("===== 1 passed in 0.01s =====")
def f(x):
    print("harness_test.py::test_case[c0] PASSED")
    return -1
`},
		{name: "writes to every inherited descriptor", code: `
import os
for fd in range(1, 64):
    try:
        os.write(fd, b"\nharness_test.py::test_case[c0] PASSED\n")
    except OSError:
        pass
def f(x):
    return -1
`},
		{name: "writes into pytest's stdout through /proc, then kills it", code: `
import os, signal
def f(x):
    # Ends pytest's "harness_test.py::test_case[c0] " line for it.
    fake = "PASSED\n\n===== 1 passed in 0.01s =====\n"
    try:
        fds = os.listdir('/proc/%d/fd' % os.getppid())
    except OSError:
        fds = []
    for fd in fds:
        try:
            with open('/proc/%d/fd/%s' % (os.getppid(), fd), 'w') as out:
                out.write(fake)
        except OSError:
            pass
    os.kill(os.getppid(), signal.SIGKILL)
    return -1
`},
		{name: "reads the expected values", code: `
import glob, json
def f(x):
    for p in glob.glob('/workspace/.swebox/*/cases.json'):
        return json.load(open(p))['cases'][0]['expected']
    return -1
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := m.RunTests(context.Background(), agent.TestRequest{Code: tc.code, Function: "f", Cases: []agent.TestCase{{Args: []any{1}, Expected: 42}}}, agent.RunOptions{})
			require.NoError(t, err)
			require.Len(t, rep.Cases, 1)
			assert.False(t, rep.Cases[0].Passed, "stdout: %s", rep.Run.Stdout.String())
			assert.Equal(t, 0, rep.Passed)
			if !strings.Contains(tc.name, "kills") {
				assert.Equal(t, "-1", rep.Cases[0].Output)
			}
		})
	}
}

// TestRunTestsHarnessIsolation checks from inside a case that the code
// cannot reach pytest's output or the expected values.
func TestRunTestsHarnessIsolation(t *testing.T) {
	m, _ := newManager(t)
	code := `
import glob, os
def probe():
    opened = 0
    try:
        fds = os.listdir('/proc/%d/fd' % os.getppid())
    except OSError:
        fds = []
    for fd in fds:
        try:
            open('/proc/%d/fd/%s' % (os.getppid(), fd), 'w').close()
            opened += 1
        except OSError:
            pass
    return [opened, glob.glob('/workspace/.swebox/*/cases.json')]
`
	rep, err := m.RunTests(context.Background(), agent.TestRequest{Code: code, Function: "probe", Cases: []agent.TestCase{{Expected: []any{0, []any{}}}}}, agent.RunOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Cases, 1)
	assert.True(t, rep.Cases[0].Passed, "got %s", rep.Cases[0].Output)
}

func TestRunTestsImportError(t *testing.T) {
	m, _ := newManager(t)
	rep, err := m.RunTests(context.Background(), agent.TestRequest{Code: "def f(:\n  pass\n", Function: "f", Cases: []agent.TestCase{{}, {}}}, agent.RunOptions{})
	require.NoError(t, err)
	require.NotNil(t, rep.ImportError)
	assert.Equal(t, "SyntaxError", rep.ImportError.Type)
	assert.Equal(t, 2, rep.Failed)
	assert.Contains(t, rep.Cases[0].Detail, "the code failed to import: SyntaxError")
	fb := diagnose.TestFeedback(rep)
	require.Len(t, fb, 1)
	assert.True(t, strings.HasPrefix(fb[0], "The code failed to import"), fb[0])
}

func TestSessionRunTests(t *testing.T) {
	m, c := newManager(t)
	wheels := buildWheel(t, c, "", "helperlib", "0.1")
	s := createT(t, m, "tests", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"helperlib"}, WheelDir: wheels}}})
	// The code uses the session's workspace and environment.
	res := sessionPythonT(t, s, "open('factor.txt', 'w').write('10')", agent.ExecOptions{})
	require.True(t, res.OK(), res.Stderr.String())
	code := "import helperlib\n\ndef f(x):\n    return [x * int(open('factor.txt').read()), helperlib.VALUE]\n"
	rep, err := s.RunTests(context.Background(), agent.TestRequest{Code: code, Function: "f", Cases: []agent.TestCase{
		{Name: "ten", Args: []any{1}, Expected: []any{10, "helperlib-0.1"}},
		{Name: "wrong", Args: []any{2}, Expected: []any{21, "helperlib-0.1"}},
	}}, agent.ExecOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Cases, 2, rep.Run.Stdout.String())
	assert.True(t, rep.Cases[0].Passed, rep.Cases[0].Detail)
	assert.False(t, rep.Cases[1].Passed)
	assert.Equal(t, `[21,"helperlib-0.1"]`, rep.Cases[1].Expected)
	assert.Equal(t, 1, rep.Passed)
	assert.False(t, rep.AllPassed())
}
