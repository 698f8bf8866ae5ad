package diagnose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/traceback"
	"github.com/swebox/swebox/sandbox"
)

func TestFeedback(t *testing.T) {
	frame := func(line int) []traceback.Frame {
		return []traceback.Frame{{File: "/workspace/.swebox/run-1/main.py", Line: line, Func: "<module>"}}
	}
	type testCase struct {
		name string
		res  agent.Result
		want []string // substrings, one per suggestion, in order
	}
	for _, tc := range []testCase{
		{name: "clean success", res: agent.Result{Kind: agent.KindOK, Timeout: time.Minute, Duration: time.Second, MemoryLimit: 1 << 30, PeakMemory: 10 << 20}},
		{name: "timeout", res: agent.Result{Kind: agent.KindTimeout, Timeout: 30 * time.Second}, want: []string{"stopped at its 30s timeout"}},
		{name: "oom", res: agent.Result{Kind: agent.KindOOM, MemoryLimit: 512 << 20, PeakMemory: 500 << 20}, want: []string{"out of memory (limit 512 MiB, peak 500 MiB)"}},
		{name: "missing module", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "ModuleNotFoundError", Message: "No module named 'numpy.linalg'", Frames: frame(3)}}, want: []string{`Module "numpy" is not installed at line 3: add its package to Requirements`}},
		{name: "syntax error", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "SyntaxError", Message: "invalid syntax", Frames: frame(7)}}, want: []string{"Fix the SyntaxError at line 7: invalid syntax."}},
		{name: "name error in a function", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "NameError", Message: "name 'x' is not defined", Frames: []traceback.Frame{{File: "/workspace/m.py", Line: 9, Func: "solve"}}}}, want: []string{"NameError at line 9 in solve(): name 'x' is not defined. Define or import"}},
		{name: "library frames skipped", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "json.decoder.JSONDecodeError", Message: "Expecting value", Frames: append(frame(2), traceback.Frame{File: "/usr/lib/python3.11/json/decoder.py", Line: 355, Func: "raw_decode"})}}, want: []string{"json.decoder.JSONDecodeError at line 2: Expecting value."}},
		{name: "harness frames skipped", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "ValueError", Message: "bad", Frames: append(frame(5), traceback.Frame{File: agent.ScriptDir + "/case_child.py", Line: 80, Func: "call"})}}, want: []string{"ValueError at line 5: bad."}},
		{name: "file not found", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "FileNotFoundError", Message: "[Errno 2] No such file or directory: 'data.csv'"}}, want: []string{"Input files are under mounts/"}},
		{name: "no network", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "urllib.error.URLError", Message: "<urlopen error [Errno -3] Temporary failure in name resolution>"}}, want: []string{"no network access"}},
		{name: "recursion", res: agent.Result{Kind: agent.KindException, Error: &traceback.Exception{Type: "RecursionError", Message: "maximum recursion depth exceeded"}}, want: []string{"Recursion went too deep"}},
		{name: "exit status", res: agent.Result{Kind: agent.KindExit, ExitCode: 2, Stderr: sandbox.Output{Head: []byte("usage: x\nerror: bad flag\n")}}, want: []string{"exited with status 2: error: bad flag."}},
		{name: "segfault", res: agent.Result{Kind: agent.KindSignal, Signal: 11}, want: []string{"signal 11 (SIGSEGV)"}},
		{name: "install", res: agent.Result{Kind: agent.KindInstall, Install: &agent.Install{ExitCode: 1, Stderr: sandbox.Output{Head: []byte("ERROR: No matching distribution found for foo\n")}}}, want: []string{"pip exited 1): ERROR: No matching distribution found for foo."}},
		{name: "install timeout", res: agent.Result{Kind: agent.KindInstall, Install: &agent.Install{TimedOut: true}}, want: []string{"timed out"}},
		{name: "egress refused, once per host", res: agent.Result{Kind: agent.KindOK, Egress: []egress.Event{
			{Host: "pypi.org", Port: "443", Allowed: true},
			{Host: "evil.example", Port: "443", Reason: "host not in the allowlist"},
			{Host: "evil.example", Port: "443", Reason: "host not in the allowlist"},
		}}, want: []string{"evil.example:443 was refused (host not in the allowlist)"}},
		{name: "near the limits", res: agent.Result{Kind: agent.KindOK, MemoryLimit: 100 << 20, PeakMemory: 95 << 20, Timeout: 10 * time.Second, Duration: 9 * time.Second}, want: []string{"peaked at 95 MiB of its 100 MiB", "took 9s of its 10s timeout"}},
		{name: "output cut and artifacts capped", res: agent.Result{Kind: agent.KindOK, Stdout: sandbox.Output{Truncated: true, Dropped: 3 << 20}, ArtifactsDropped: 4, Artifacts: []agent.Artifact{{Name: "big", Size: 10}}}, want: []string{"output was cut (3 MiB dropped", "4 more files", "1 files under output/ were too large"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := diagnose.Feedback(tc.res)
			assert.Len(t, got, len(tc.want), "%q", got)
			for i := range min(len(got), len(tc.want)) {
				assert.Contains(t, got[i], tc.want[i])
			}
		})
	}
}

func TestTestFeedback(t *testing.T) {
	failed := func(name, detail string) agent.CaseResult { return agent.CaseResult{Name: name, Detail: detail} }
	type testCase struct {
		name string
		rep  agent.TestReport
		want []string
	}
	for _, tc := range []testCase{
		{name: "all pass", rep: agent.TestReport{Cases: []agent.CaseResult{{Name: "a", Passed: true}}, Passed: 1}},
		{name: "import error", rep: agent.TestReport{ImportError: &traceback.Exception{Type: "SyntaxError", Message: "invalid syntax", Frames: []traceback.Frame{{File: "/w/solution.py", Line: 4}}}, Failed: 2}, want: []string{"The code failed to import, so no case ran. Fix the SyntaxError at line 4"}},
		{name: "some fail", rep: agent.TestReport{Cases: []agent.CaseResult{{Name: "ok", Passed: true}, failed("neg", "expected -1, got 1")}, Passed: 1, Failed: 1}, want: []string{"neg failed: expected -1, got 1.", "1 of 2 cases pass"}},
		{name: "many fail", rep: agent.TestReport{Cases: []agent.CaseResult{failed("a", "x"), failed("b", "x"), failed("c", "x"), failed("d", "x"), failed("e", "x")}, Failed: 5}, want: []string{"a failed", "b failed", "c failed", "2 more cases failed."}},
		{name: "timed out case", rep: agent.TestReport{Cases: []agent.CaseResult{{Name: "slow", Detail: "timed out after 2s", TimedOut: true}}, Failed: 1}, want: []string{"slow failed: timed out after 2s (look for an infinite loop"}},
		{name: "whole run timed out", rep: agent.TestReport{Run: agent.Result{Kind: agent.KindTimeout, Timeout: time.Minute}, Cases: []agent.CaseResult{failed("a", "the test run did not finish")}, Failed: 1}, want: []string{"1m0s timeout", "a failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := diagnose.TestFeedback(tc.rep)
			assert.Len(t, got, len(tc.want), "%q", got)
			for i := range min(len(got), len(tc.want)) {
				assert.Contains(t, got[i], tc.want[i])
			}
			for _, s := range got {
				assert.False(t, strings.Contains(s, ".."), "no doubled full stops: %q", s)
			}
		})
	}
}
