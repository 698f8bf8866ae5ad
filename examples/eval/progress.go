package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// isTerminal reports whether w is a terminal (a character device), where a
// live progress line can be redrawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress shows a run's events: one line per finished instance, and on a
// terminal a status line below them, redrawn in place, with the counts and
// an estimate of the time left.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	now     func() time.Time
	start   time.Time
	total   int
	done    int
	ran     int // finished instances that were evaluated (not skipped)
	running int
	counts  map[swebench.Status]int
	skipped map[string]bool
	drawn   bool
}

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, tty: tty, now: time.Now, counts: map[swebench.Status]int{}, skipped: map[string]bool{}}
}

// event is the swebench.Config.Progress callback.
func (p *progress) event(ev swebench.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = p.now()
	}
	p.total, p.done = ev.Total, ev.Done
	p.clear()
	switch ev.Kind {
	case swebench.EventStarted:
		p.running++
	case swebench.EventSkipped:
		p.skipped[ev.InstanceID] = true
		if ev.Result != nil {
			p.counts[ev.Result.Status]++
		}
		if ev.Result != nil && ev.Result.Status == swebench.StatusError {
			fmt.Fprintf(p.w, "[%d/%d] %s: %s in an earlier run, not retried (--retry_failures retries it)\n", ev.Done, ev.Total, ev.InstanceID, ev.Result.Outcome)
		} else {
			fmt.Fprintf(p.w, "[%d/%d] %s: %s (report.json from an earlier run)\n", ev.Done, ev.Total, ev.InstanceID, statusOf(ev.Result))
		}
		if ev.Result != nil && ev.Result.Warning != "" {
			fmt.Fprintf(p.w, "warning: %s: %s\n", ev.InstanceID, ev.Result.Warning)
		}
	case swebench.EventFinished:
		if p.running > 0 {
			p.running--
		}
		p.ran++
		if ev.Result != nil {
			p.counts[ev.Result.Status]++
		}
		fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", ev.Done, ev.Total, ev.InstanceID, describe(ev.Result))
	}
	if p.tty {
		fmt.Fprint(p.w, p.statusLine())
		p.drawn = true
	}
}

// clear erases the status line so that a log line can take its place.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// finish removes the status line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *progress) statusLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d done · %d resolved · %d unresolved · %d error · %d running",
		p.done, p.total, p.counts[swebench.StatusResolved], p.counts[swebench.StatusUnresolved], p.counts[swebench.StatusError], p.running)
	if eta, ok := p.eta(); ok {
		fmt.Fprintf(&b, " · ETA %s", eta)
	}
	return b.String()
}

// eta extrapolates the time left from the instances evaluated so far
// (skipped ones cost nothing and are left out).
func (p *progress) eta() (time.Duration, bool) {
	if p.ran == 0 || p.done >= p.total {
		return 0, false
	}
	elapsed := p.now().Sub(p.start)
	left := time.Duration(float64(elapsed) / float64(p.ran) * float64(p.total-p.done))
	return left.Round(time.Second), true
}

func (p *progress) skippedIDs() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]bool, len(p.skipped))
	for k := range p.skipped {
		out[k] = true
	}
	return out
}

func statusOf(r *swebench.InstanceResult) string {
	if r == nil {
		return "?"
	}
	return string(r.Status)
}

func describe(r *swebench.InstanceResult) string {
	if r == nil {
		return "?"
	}
	if r.Status == swebench.StatusError {
		return fmt.Sprintf("%s after %s: %s", outcomeName(r), r.Duration.Round(100*time.Millisecond), outcomeNote(r, 200))
	}
	return fmt.Sprintf("%s (FAIL_TO_PASS %s, PASS_TO_PASS %s) in %s", r.Status, frac(r.FailToPass), frac(r.PassToPass), r.Duration.Round(100*time.Millisecond))
}

// outcomeName is the typed outcome of r, or its status for a result
// without one.
func outcomeName(r *swebench.InstanceResult) string {
	if r.Outcome != "" {
		return string(r.Outcome)
	}
	return string(r.Status)
}

// outcomeNote says in words why an instance has no verdict: what the
// outcome means where it says it all, else the first line of the error,
// which names what failed (image, spec, engine).
func outcomeNote(r *swebench.InstanceResult, max int) string {
	switch r.Outcome {
	case swebench.OutcomePatchFailed:
		return "the model patch does not apply (run_instance.log has each attempt's output)"
	case swebench.OutcomeTimedOut:
		return "the tests ran past the timeout"
	case swebench.OutcomeCancelled:
		return "stopped by the interrupt before it finished"
	case swebench.OutcomeEngineLost:
		return "the engine stopped answering"
	}
	if errors.Is(r.Err, sandbox.ErrRateLimited) {
		return rateLimitNote(r.Err)
	}
	return firstLine(r.Error, max)
}

func frac(f swebench.Fraction) string { return fmt.Sprintf("%d/%d", f.Passed, f.Total) }

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// outcomeOrder is the order outcomes are counted in the summary.
var outcomeOrder = []swebench.Outcome{
	swebench.OutcomeResolved, swebench.OutcomeUnresolved, swebench.OutcomeOutOfMemory, swebench.OutcomePatchFailed,
	swebench.OutcomeTimedOut, swebench.OutcomeError, swebench.OutcomeEmptyPatch, swebench.OutcomeImageMissing,
	swebench.OutcomeImagePullFailed, swebench.OutcomeImageBuildFailed, swebench.OutcomeEngineLost, swebench.OutcomeSandboxLost, swebench.OutcomeDiskLimit, swebench.OutcomeInstallFailed, swebench.OutcomeNeedsNetwork, swebench.OutcomeCancelled,
}

// writeSummary prints the final table (instance, outcome, FAIL_TO_PASS,
// PASS_TO_PASS, time, note), the official totals, the outcomes and where
// the reports are.
func writeSummary(w io.Writer, res *swebench.Result, skipped map[string]bool, logRoot string) {
	type row struct{ id, outcome, f2p, p2p, took, note string }
	var rows []row
	seen := map[string]bool{}
	for _, r := range res.Instances {
		seen[r.InstanceID] = true
		x := row{id: r.InstanceID, outcome: outcomeName(&r), f2p: "-", p2p: "-", took: r.Duration.Round(100 * time.Millisecond).String()}
		if r.Status != swebench.StatusError {
			x.f2p, x.p2p = frac(r.FailToPass), frac(r.PassToPass)
		}
		if skipped[r.InstanceID] {
			x.took, x.note = "-", "earlier run"
			if r.Warning != "" {
				x.note = "earlier run, patch changed since"
			}
		}
		if r.Status == swebench.StatusError {
			x.note = outcomeNote(&r, 80)
		}
		if n := len(r.Retries); n > 0 && r.Status != swebench.StatusError {
			last := r.Retries[n-1]
			x.note = fmt.Sprintf("retried %d× (sandbox lost: %s on node %s)", n, last.Reason, last.Node)
		}
		if r.Repeats.Flipped() {
			x.note = flakyNote(r.Repeats)
		}
		rows = append(rows, x)
	}
	for _, id := range res.Report.EmptyPatchIDs {
		seen[id] = true
		rows = append(rows, row{id: id, outcome: string(swebench.OutcomeEmptyPatch), f2p: "-", p2p: "-", took: "-", note: "not run"})
	}
	for id, o := range res.Outcomes {
		if !seen[id] {
			rows = append(rows, row{id: id, outcome: string(o), f2p: "-", p2p: "-", took: "-", note: "not started"})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })

	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tOUTCOME\tF2P\tP2P\tTIME\tNOTE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.id, r.outcome, r.f2p, r.p2p, r.took, r.note)
	}
	tw.Flush()

	rep := res.Report
	fmt.Fprintf(w, "\n%d instances: %d resolved, %d unresolved, %d error, %d empty patch",
		rep.TotalInstances, rep.ResolvedInstances, rep.UnresolvedInstances, rep.ErrorInstances, rep.EmptyPatchInstances)
	if n := len(rep.IncompleteIDs); n > 0 {
		fmt.Fprintf(w, ", %d without a prediction", n)
	}
	fmt.Fprintln(w)
	if len(res.Outcomes) > 0 {
		count := map[swebench.Outcome]int{}
		infra := 0
		for _, o := range res.Outcomes {
			count[o]++
			if o.Infrastructure() {
				infra++
			}
		}
		var parts []string
		for _, o := range outcomeOrder {
			if count[o] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
			}
		}
		fmt.Fprintf(w, "outcomes: %s\n", strings.Join(parts, ", "))
		if infra > 0 {
			fmt.Fprintf(w, "%d instances have no verdict for reasons of the machine, not of the model; a rerun with the same --run_id evaluates them\n", infra)
		}
	}
	if n := len(rep.Retried); n > 0 {
		fmt.Fprintf(w, "retried: %d instances evaluated again on a new pod because the cluster lost their sandbox (%s in the run report)\n", n, grade.RetriedKey)
	}
	writeFlakySummary(w, res)
	if res.ReportPath != "" {
		fmt.Fprintf(w, "run report: %s\n", res.ReportPath)
	}
	if res.Model != "" {
		fmt.Fprintf(w, "logs:       %s/<instance>/ (run_instance.log, test_output.txt, report.json)\n", joinPath(logRoot, res.Model))
	}
}

func joinPath(root, model string) string {
	return root + string(os.PathSeparator) + strings.ReplaceAll(model, "/", "__")
}

// flakyNote marks an instance whose runs disagree: the verdict of each run
// when it flipped, else how many tests changed status.
func flakyNote(r *swebench.Repeats) string {
	if r.VerdictFlipped {
		runs := make([]string, len(r.Outcomes))
		for i, o := range r.Outcomes {
			runs[i] = string(o)
		}
		return "FLAKY VERDICT: " + strings.Join(runs, ", ")
	}
	return fmt.Sprintf("%d flaky tests", len(r.FlakyTests))
}

// writeFlakySummary counts what changed between the runs of a repeated run
// and names flaky.json.
func writeFlakySummary(w io.Writer, res *swebench.Result) {
	if res.FlakyPath == "" {
		return
	}
	var verdicts, tests, instances int
	for _, r := range res.Instances {
		if r.Repeats.Flipped() {
			instances++
			tests += len(r.Repeats.FlakyTests)
			if r.Repeats.VerdictFlipped {
				verdicts++
			}
		}
	}
	fmt.Fprintf(w, "repeats: %d verdicts flipped, %d tests changed status in %d instances; the totals above are the first run's\n", verdicts, tests, instances)
	fmt.Fprintf(w, "flaky:      %s\n", res.FlakyPath)
}

// rateLimitNote marks an instance whose image pull a registry's rate limit
// refused until swebox gave up.
func rateLimitNote(err error) string {
	var pr *swebench.PullRetryError
	if errors.As(err, &pr) {
		return fmt.Sprintf("registry rate limit: %d pulls refused over %s; a rerun retries it", pr.Attempts, pr.Waited)
	}
	return "registry rate limit; a rerun retries it"
}
