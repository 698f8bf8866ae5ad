package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgress(t *testing.T) {
	res := func(s swebench.Status, d time.Duration) *swebench.InstanceResult {
		return &swebench.InstanceResult{Status: s, Duration: d, FailToPass: swebench.Fraction{Passed: 1, Total: 2}, PassToPass: swebench.Fraction{Passed: 3, Total: 3}, Error: "patch apply failed: see run_instance.log\nmore"}
	}
	events := []struct {
		after time.Duration
		ev    swebench.Event
	}{
		{0, swebench.Event{Kind: swebench.EventSkipped, InstanceID: "a", Result: res(swebench.StatusResolved, 0), Done: 1, Total: 4}},
		{0, swebench.Event{Kind: swebench.EventStarted, InstanceID: "b", Done: 1, Total: 4}},
		{0, swebench.Event{Kind: swebench.EventStarted, InstanceID: "c", Done: 1, Total: 4}},
		{10 * time.Second, swebench.Event{Kind: swebench.EventFinished, InstanceID: "b", Result: res(swebench.StatusUnresolved, 10*time.Second), Done: 2, Total: 4}},
		{10 * time.Second, swebench.Event{Kind: swebench.EventFinished, InstanceID: "c", Result: res(swebench.StatusError, 20*time.Second), Done: 3, Total: 4}},
	}
	type testCase struct {
		name string
		tty  bool
		want string
	}
	plain := "[1/4] a: resolved (report.json from an earlier run)\n" +
		"[2/4] b: unresolved (FAIL_TO_PASS 1/2, PASS_TO_PASS 3/3) in 10s\n" +
		"[3/4] c: error after 20s: patch apply failed: see run_instance.log\n"
	cases := []testCase{
		{name: "plain log lines off a terminal", tty: false, want: plain},
		{name: "status line on a terminal", tty: true, want: "[1/4] a: resolved (report.json from an earlier run)\n" +
			"1/4 done · 1 resolved · 0 unresolved · 0 error · 0 running" +
			"\r\033[K1/4 done · 1 resolved · 0 unresolved · 0 error · 1 running" +
			"\r\033[K1/4 done · 1 resolved · 0 unresolved · 0 error · 2 running" +
			"\r\033[K[2/4] b: unresolved (FAIL_TO_PASS 1/2, PASS_TO_PASS 3/3) in 10s\n" +
			// 1 evaluated in 10 s, 2 left: 20 s.
			"2/4 done · 1 resolved · 1 unresolved · 0 error · 1 running · ETA 20s" +
			"\r\033[K[3/4] c: error after 20s: patch apply failed: see run_instance.log\n" +
			// 2 evaluated in 20 s, 1 left: 10 s.
			"3/4 done · 1 resolved · 1 unresolved · 1 error · 0 running · ETA 10s" +
			"\r\033[K"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := &fakeClock{t: time.Unix(1e9, 0)}
			p := newProgress(&buf, tc.tty)
			p.now = clock.now
			for _, e := range events {
				clock.t = clock.t.Add(e.after)
				p.event(e.ev)
			}
			p.finish()
			assert.Equal(t, tc.want, buf.String())
			assert.Equal(t, map[string]bool{"a": true}, p.skippedIDs())
		})
	}
}

// A live line names the typed outcome and says what it means, not the
// engine's message (a cancelled request's "context canceled").
func TestLiveLineOutcomes(t *testing.T) {
	type testCase struct {
		name string
		res  swebench.InstanceResult
		want string
	}
	engineMsg := `Post "http://%2Fvar%2Frun%2Fdocker.sock/v1.41/containers/create": context canceled`
	cases := []testCase{
		{name: "patch failed", res: swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomePatchFailed, Duration: time.Second, Error: "patch apply failed: see run_instance.log"},
			want: "[1/1] x__y-1: patch_failed after 1s: the model patch does not apply (run_instance.log has each attempt's output)\n"},
		{name: "timed out", res: swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomeTimedOut, Duration: 20 * time.Second, Error: "tests timed out"},
			want: "[1/1] x__y-1: timed_out after 20s: the tests ran past the timeout\n"},
		{name: "cancelled", res: swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomeCancelled, Duration: 2 * time.Second, Error: engineMsg},
			want: "[1/1] x__y-1: cancelled after 2s: stopped by the interrupt before it finished\n"},
		{name: "engine lost", res: swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomeEngineLost, Duration: 2 * time.Second, Error: engineMsg},
			want: "[1/1] x__y-1: engine_lost after 2s: the engine stopped answering\n"},
		{name: "other error keeps its message", res: swebench.InstanceResult{Status: swebench.StatusError, Outcome: swebench.OutcomeError, Duration: time.Second, Error: "spec: no test command for x/y\nmore"},
			want: "[1/1] x__y-1: error after 1s: spec: no test command for x/y\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(&buf, false)
			p.event(swebench.Event{Kind: swebench.EventFinished, InstanceID: "x__y-1", Result: &tc.res, Done: 1, Total: 1})
			assert.Equal(t, tc.want, buf.String())
			assert.NotContains(t, buf.String(), "context canceled")
		})
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file")
	assert.False(t, isTerminal(&bytes.Buffer{}), "not a file")
}

func TestSummaryTable(t *testing.T) {
	res := &swebench.Result{
		Model: "org/model",
		Instances: []swebench.InstanceResult{
			{InstanceID: "x__y-2", Status: swebench.StatusError, Outcome: swebench.OutcomeTimedOut, Duration: 21500 * time.Millisecond, Error: "test timed out after 20 seconds"},
			{InstanceID: "x__y-1", Status: swebench.StatusResolved, Outcome: swebench.OutcomeResolved, Duration: 3 * time.Second, FailToPass: swebench.Fraction{Passed: 1, Total: 1}, PassToPass: swebench.Fraction{Passed: 4, Total: 4}},
			{InstanceID: "x__y-3", Status: swebench.StatusUnresolved, Outcome: swebench.OutcomeUnresolved, FailToPass: swebench.Fraction{Passed: 0, Total: 1}, PassToPass: swebench.Fraction{Passed: 2, Total: 2}},
			{InstanceID: "x__y-6", Status: swebench.StatusError, Outcome: swebench.OutcomeEngineLost, Duration: time.Second, Error: "create sandbox: cannot reach the Docker engine"},
		},
		Outcomes: map[string]swebench.Outcome{"x__y-1": swebench.OutcomeResolved, "x__y-2": swebench.OutcomeTimedOut, "x__y-3": swebench.OutcomeUnresolved,
			"x__y-4": swebench.OutcomeEmptyPatch, "x__y-6": swebench.OutcomeEngineLost, "x__y-7": swebench.OutcomeCancelled},
		Report: grade.RunReport{TotalInstances: 7, ResolvedInstances: 1, UnresolvedInstances: 1, ErrorInstances: 3, EmptyPatchInstances: 1,
			EmptyPatchIDs: []string{"x__y-4"}, IncompleteIDs: []string{"x__y-5"}},
		ReportPath: "reports/org__model.r1.json",
	}
	var buf bytes.Buffer
	writeSummary(&buf, res, map[string]bool{"x__y-3": true}, filepath.Join("logs", "run_evaluation", "r1"))
	want := `
INSTANCE  OUTCOME      F2P  P2P  TIME   NOTE
x__y-1    resolved     1/1  4/4  3s     
x__y-2    timed_out    -    -    21.5s  the tests ran past the timeout
x__y-3    unresolved   0/1  2/2  -      earlier run
x__y-4    empty_patch  -    -    -      not run
x__y-6    engine_lost  -    -    1s     the engine stopped answering
x__y-7    cancelled    -    -    -      not started

7 instances: 1 resolved, 1 unresolved, 3 error, 1 empty patch, 1 without a prediction
outcomes: 1 resolved, 1 unresolved, 1 timed_out, 1 empty_patch, 1 engine_lost, 1 cancelled
2 instances have no verdict for reasons of the machine, not of the model; a rerun with the same --run_id evaluates them
run report: reports/org__model.r1.json
logs:       logs/run_evaluation/r1/org__model/<instance>/ (run_instance.log, test_output.txt, report.json)
`
	assert.Equal(t, want, buf.String())
}

// The image the demo builds without the script has the script's packages.
func TestImagePackagesMatchBuildScript(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "build-image.sh"))
	if os.IsNotExist(err) {
		t.Skip("scripts/build-image.sh is not in this checkout")
	}
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^packages=(\S+)$`).FindSubmatch(script)
	require.NotNil(t, m, "no packages= line in the script")
	assert.Equal(t, string(m[1]), strings.Join(imagePackages, ","))
	for _, arg := range mmdebstrapArgs() {
		if strings.HasPrefix(arg, "--customize-hook=") || strings.HasPrefix(arg, "--dpkgopt=") {
			name, value, _ := strings.Cut(arg, "=")
			assert.Contains(t, string(script), name+"='"+value+"'", "the script lacks %s", arg)
		}
	}
	for _, c := range imageChanges {
		assert.Contains(t, string(script), "--change '"+c+"'")
	}
}

// The summary counts every outcome swebench defines: each Outcome constant
// of swebench/outcome.go is in outcomeOrder, so a new one cannot be left
// out of the "outcomes:" line.
func TestSummaryCountsEveryOutcome(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "swebench", "outcome.go"))
	require.NoError(t, err)
	defined := regexp.MustCompile(`(?m)^\s*Outcome\w+\s+Outcome = "([a-z_]+)"`).FindAllStringSubmatch(string(src), -1)
	require.NotEmpty(t, defined)
	listed := map[swebench.Outcome]bool{}
	for _, o := range outcomeOrder {
		listed[o] = true
	}
	for _, m := range defined {
		assert.True(t, listed[swebench.Outcome(m[1])], "outcome %q is not in outcomeOrder", m[1])
	}
	assert.Len(t, outcomeOrder, len(defined), "outcomeOrder lists each outcome once")
}
