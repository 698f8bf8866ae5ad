package swebench

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"strings"
	"sync"
	"time"

	"github.com/swebox/swebox/internal/atomicfile"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/spec"
	"github.com/swebox/swebox/swebench/strict"
)

// Commands the evaluator's sandboxes admit: what patch application and the
// eval script run, and nothing else.
var evalPolicy = sandbox.AllowCommands("bash", "git", "patch")

// Where the model patch and eval.sh are staged in the container (the
// official harness uses /tmp/patch.diff and /eval.sh).
const (
	stagedDir = "/testbed/.git/swebox"
)

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Timeouts of the evaluator's own steps around the eval script.
const (
	patchTimeout = 5 * time.Minute
	diffTimeout  = 2 * time.Minute
)

// instanceLog is run_instance.log: timestamped lines, safe for concurrent use.
type instanceLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *instanceLog) printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "%s - %s\n", time.Now().UTC().Format("2006-01-02 15:04:05,000"), fmt.Sprintf(format, a...))
}

// instance evaluates one instance (Config.Repeat times) and returns its
// result, run 1's with the comparison of the runs. Every failure is
// recorded in the result and in run_instance.log, never returned.
func (e *evaluator) instance(ctx context.Context, n int, inst dataset.Instance, pred dataset.Prediction) InstanceResult {
	start := time.Now()
	id := inst.InstanceID
	dir, err := e.instanceDir(id)
	if err != nil {
		res := InstanceResult{InstanceID: id}
		res.setErr(err)
		res.Outcome = outcomeOf(&res)
		e.emit(Event{Kind: EventFinished, InstanceID: id, Result: &res})
		return res
	}
	started := false
	attempt := func(d string) InstanceResult {
		return e.attempt(ctx, n, inst, pred, d, func() {
			if !started {
				started = true
				e.emit(Event{Kind: EventStarted, InstanceID: id})
			}
		})
	}
	res := attempt(dir)
	res.LogDir = dir
	if e.cfg.Repeat > 1 {
		res.Repeats = e.repeatRuns(attempt, inst, pred, dir, res)
	}
	kind := EventSkipped
	if started {
		kind = EventFinished
		res.Duration = since(start)
	}
	e.emit(Event{Kind: kind, InstanceID: id, Result: &res})
	return res
}

// attempt evaluates one run of an instance in dir, or reports what an
// earlier run recorded there; it calls start before evaluating.
func (e *evaluator) attempt(ctx context.Context, n int, inst dataset.Instance, pred dataset.Prediction, dir string, start func()) InstanceResult {
	if res, ok := e.earlierResult(inst, pred, dir); ok {
		return res
	}
	res := InstanceResult{InstanceID: inst.InstanceID, LogDir: dir}
	start()
	os.Remove(filepath.Join(dir, retriesFile))
	// One deadline for every attempt: a retry gets what is left.
	actx, cancel := context.WithTimeoutCause(ctx, e.cfg.InstanceTimeout, errInstanceTimeout)
	defer cancel()
	var retries []grade.Retry
	var lastLost error
	var pulls pullTries
	for {
		err := e.evaluate(actx, n, inst, pred, dir, &res, retries)
		var lost *sandbox.LostError
		isLost := errors.As(err, &lost)
		if err != nil && ctx.Err() == nil && context.Cause(actx) == errInstanceTimeout {
			losses := len(retries)
			if isLost {
				lastLost = err
				losses++
			}
			err = &InstanceTimeoutError{Timeout: e.cfg.InstanceTimeout, LostSandboxes: losses, Lost: lastLost}
		}
		if again, perr := e.pullBackoff(actx, inst.InstanceID, err, &pulls); again {
			res = InstanceResult{InstanceID: inst.InstanceID, LogDir: dir}
			continue
		} else if perr != nil {
			err = perr
		}
		if err == nil || !isLost || actx.Err() != nil || len(retries) >= e.cfg.LostRetries {
			if err != nil {
				res.setErr(err)
			}
			break
		}
		lastLost = err
		// The cluster, not the prediction, ended this attempt: nothing of
		// it is kept but the record; the next starts from scratch.
		retries = append(retries, grade.Retry{Pod: lost.Sandbox, Node: lost.Node, Reason: lost.Reason, Error: err.Error()})
		e.log.Warn("sandbox lost; evaluating the instance again on a new sandbox", "instance", inst.InstanceID,
			"pod", lost.Sandbox, "node", lost.Node, "reason", lost.Reason, "retry", len(retries), "of", e.cfg.LostRetries)
		res = InstanceResult{InstanceID: inst.InstanceID, LogDir: dir}
	}
	res.Retries = retries
	res.Outcome = outcomeOf(&res)
	if err := recordRetries(dir, retries); err != nil {
		res.Warning = fmt.Sprintf("could not record the retries: %v", err)
	}
	if err := recordOutcome(dir, &res); err != nil {
		res.Warning = fmt.Sprintf("could not record the outcome: %v", err)
	}
	return res
}

// earlierResult is what an earlier run recorded in dir that this one keeps
// instead of evaluating the instance: a report.json (the official resume
// rule), or a failure of the prediction's, unless asked to retry or the
// patch has changed since.
func (e *evaluator) earlierResult(inst dataset.Instance, pred dataset.Prediction, dir string) (InstanceResult, bool) {
	res := InstanceResult{InstanceID: inst.InstanceID, LogDir: dir}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		fillFromReport(&res, b)
		res.Retries = recordedRetries(dir)
		if res.Status == StatusUnresolved && oomLogged(dir) {
			res.OOMKills = 1 // at least
		}
		res.Outcome = outcomeOf(&res)
		if old, err := os.ReadFile(filepath.Join(dir, "patch.diff")); err == nil && string(old) != pred.Patch() {
			res.Warning = "the prediction's patch differs from the one this report graded; use a new run id to evaluate it"
		}
		return res, true
	}
	if rec, ok := recordedOutcome(dir); ok && !e.cfg.RetryFailures {
		if old, err := os.ReadFile(filepath.Join(dir, "patch.diff")); err == nil && string(old) == pred.Patch() {
			res.setErr(&EarlierRunError{Outcome: rec.Outcome, Message: rec.Error})
			res.Outcome = outcomeOf(&res)
			return res, true
		}
	}
	return InstanceResult{}, false
}

// errInstanceTimeout is the cause of an attempt's context that ran past
// Config.InstanceTimeout.
var errInstanceTimeout = errors.New("instance timeout")

// evaluate does the work of one instance; an error makes it an error
// instance (no report.json), as the official EvaluationError does.
//
// retries are the earlier attempts of this run that the cluster cut short
// by losing the sandbox: run_instance.log then goes on after their lines.
func (e *evaluator) evaluate(ctx context.Context, n int, inst dataset.Instance, pred dataset.Prediction, dir string, res *InstanceResult, retries []grade.Retry) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	// Leftovers of an interrupted attempt would confuse the rerun: its logs
	// and the temporary files of writes a crash cut short.
	stale := []string{"test_output.txt", outcomeFile}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if len(retries) == 0 {
		stale = append(stale, "run_instance.log")
		flags |= os.O_TRUNC
	}
	for _, f := range stale {
		os.Remove(filepath.Join(dir, f))
	}
	if err := atomicfile.RemoveStale(dir, ""); err != nil {
		return fmt.Errorf("remove leftovers: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, "run_instance.log"), flags, 0o644)
	if err != nil {
		return fmt.Errorf("create run_instance.log: %w", err)
	}
	defer lf.Close()
	ilog := &instanceLog{f: lf}
	if k := len(retries); k > 0 {
		last := retries[k-1]
		ilog.printf("%s %d of %d: pod %s on node %q was lost (%s); evaluating %s again from scratch on a new sandbox",
			retryLine, k, e.cfg.LostRetries, last.Pod, last.Node, last.Reason, inst.InstanceID)
	}
	defer func() {
		switch {
		case err != nil && context.Cause(ctx) == errInstanceTimeout:
			ilog.printf("Error: %v: the instance ran past its time of %s, which covers every attempt", err, e.cfg.InstanceTimeout)
		case err != nil:
			ilog.printf("Error: %v", err)
		}
	}()
	patch := pred.Patch()
	if err := writeFileAtomic(filepath.Join(dir, "patch.diff"), []byte(patch)); err != nil {
		return err
	}
	ts, mode := e.specs[inst.InstanceID].ts, e.specs[inst.InstanceID].mode
	for _, note := range ts.Notes {
		ilog.printf("Spec: %s", note)
	}
	if err := e.specs[inst.InstanceID].err; err != nil {
		return err
	}
	if ts.Image == "" {
		return &NoImageError{Repo: inst.Repo, Version: inst.Version}
	}
	assets, err := e.stageAssets(ctx, ts, dir, ilog)
	if err != nil {
		return err
	}
	if assets.downloads != nil {
		ts.Downloads = assets.downloads
	}
	installStatus := installStatusFile(mode, ts)
	script := ts.EvalScript(spec.ScriptOptions{SkipInstall: mode == harness.ModeWorkspace, BeforeTestOutput: assets.restore, InstallStatusFile: installStatus})
	var sr *strictRun
	if e.cfg.GradingMode == GradingStrict {
		if !ts.Run.Official() {
			return &ConfigError{Field: "GradingMode", Value: string(GradingStrict), Reason: "strict grading runs the official procedure; this row's family's harness runs its own"}
		}
		sr = newStrictRun(inst)
		script = sr.script(script)
	}
	if err := writeFileAtomic(filepath.Join(dir, "eval.sh"), []byte(script)); err != nil {
		return err
	}

	client := e.cfg.Sandboxes[n%len(e.cfg.Sandboxes)]
	if err := e.images.ensure(ctx, client, ts.Image); err != nil {
		return err
	}
	if _, note := e.capabilities(inst); note != "" {
		ilog.printf("%s", note)
	}
	sbSpec, populate, cleanup, err := e.sandboxSpec(ctx, client, inst, ts, ilog)
	defer func() { err = errors.Join(err, cleanup()) }()
	if err != nil {
		return err
	}
	runtime := sbSpec.Runtime
	if runtime == "" {
		runtime = "the engine's default runtime"
	}
	sb, aheadErr := e.ahead.take(ctx, inst.InstanceID, client, sbSpec)
	var lost *sandbox.LostError
	switch {
	case sb != nil:
		ilog.printf("Container for %s in %s (%s mode, %s) was started ahead of its turn", inst.InstanceID, ts.Image, mode, runtime)
	case errors.As(aheadErr, &lost):
		// As when the cluster loses the sandbox of the worker's own
		// start: a retry on a new one.
		return fmt.Errorf("start sandbox ahead of its turn: %w", aheadErr)
	default:
		if aheadErr != nil {
			ilog.printf("The container started ahead for %s failed (%v); starting another", inst.InstanceID, aheadErr)
		}
		ilog.printf("Creating container for %s in %s (%s mode, %s)...", inst.InstanceID, ts.Image, mode, runtime)
		if sb, err = client.Create(ctx, sbSpec); err != nil {
			return fmt.Errorf("create sandbox: %w", err)
		}
	}
	defer func() {
		if rerr := sb.Remove(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
		ilog.printf("Container for %s removed", inst.InstanceID)
	}()
	ilog.printf("Container for %s started: %s", inst.InstanceID, sb.ID())
	if lostHook != nil {
		if err := lostHook(ctx, inst.InstanceID, len(retries)); err != nil {
			return err
		}
	}
	if populate != nil {
		if err := populate(ctx, sb); err != nil {
			return err
		}
	}

	// The patch, and after it the script, go into the repository's .git
	// directory: it is on a mount (bind or volume) or on the writable root
	// of prebuilt mode, which the engine's archive endpoint writes to
	// directly, and git ignores it.
	workdir := ts.Run.Dir()
	staging := ts.Run.StagingDir() + "/swebox"
	patches := map[string][]byte{"patch.diff": []byte(patch)}
	if ts.Run.TestPatchFirst {
		patches["test.diff"] = []byte(ts.TestPatch)
	}
	if _, err := sb.CopyIn(ctx, sandbox.CopyInRequest{Tar: tarFiles(patches), Dest: ts.Run.StagingDir()}); err != nil {
		return fmt.Errorf("copy patch: %w", err)
	}
	applied, err := e.applyPatches(ctx, sb, ilog, res, ts.Run, staging)
	if errors.Is(err, ErrPatchApply) && ts.Run.PatchFailureGraded {
		return e.gradeUnapplied(inst, ts, dir, res, ilog)
	}
	if err != nil {
		return err
	}
	res.PatchCommand = applied
	// The script arrives only now, under a name the patch could not
	// predict, so a patch cannot have replaced it.
	scriptName := "eval-" + randomHex(8) + ".sh"
	staged := map[string][]byte{scriptName: []byte(script)}
	for name, data := range assets.files {
		staged[name] = data
	}
	if sr != nil {
		staged[strict.PluginFile] = strict.Plugin()
	}
	if _, err := sb.CopyIn(ctx, sandbox.CopyInRequest{Tar: tarFiles(staged), Dest: ts.Run.StagingDir()}); err != nil {
		return fmt.Errorf("copy eval script: %w", err)
	}
	if e.cfg.LogDiffs {
		e.logDiff(ctx, sb, ilog, workdir, "before")
	}

	ilog.printf("Running eval script (timeout %s)...", e.cfg.Timeout)
	outPath := filepath.Join(dir, "test_output.txt")
	out, err := newCappedFile(outPath, e.cfg.TestOutputLimit)
	if err != nil {
		return fmt.Errorf("create test_output.txt: %w", err)
	}
	// stderr joins stdout in the shell so that set -x lines (the markers)
	// and the test runner's output keep their order, as the official
	// docker exec with merged streams does. bash reads a script file as it
	// goes, so tests could rewrite what runs after them (the exit-code
	// lines, say); eval of the whole text, read before anything runs,
	// leaves nothing to rewrite.
	runScript := `exec 2>&1; eval "$(< ` + staging + "/" + scriptName + `)"`
	if sr != nil {
		runScript = sr.runCommand(stagedDir + "/" + scriptName)
	}
	req := sandbox.ExecRequest{
		Cmd: []string{"bash", "-c", runScript}, WorkingDir: workdir,
		Timeout: e.cfg.Timeout, Stdout: out, OutputLimit: 4 << 10,
	}
	var stdout *cappedFile
	stdoutPath := filepath.Join(dir, "test_stdout.txt")
	if ts.Run.Log == spec.LogStderrFirst {
		if stdout, err = newCappedFile(stdoutPath, e.cfg.TestOutputLimit); err != nil {
			out.Abort()
			return fmt.Errorf("create test_stdout.txt: %w", err)
		}
		// As docker_run runs it: bash on the script file, the streams
		// apart. No markers follow the tests for them to rewrite.
		req.Cmd = []string{"bash", staging + "/" + scriptName}
		req.Stdout, req.Stderr = stdout, out
	}
	run, runErr := sb.Exec(ctx, req)
	res.TestDuration = run.Duration.Round(time.Millisecond)
	if stdout != nil && runErr == nil {
		runErr = stdout.appendTo(stdoutPath, out, ts.Run.Log.Trailer(run.ExitCode))
	} else if stdout != nil {
		stdout.Abort()
	}
	if runErr != nil {
		out.Abort() // what the script printed before the failure is no test log
		return fmt.Errorf("run eval script: %w", runErr)
	}
	if run.TimedOut {
		// The official harness appends this line to the log, which a
		// regrade then reads.
		fmt.Fprintf(out, "\n\nTimeout error: %d seconds exceeded.", int(e.cfg.Timeout.Seconds()))
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write test_output.txt: %w", err)
	}
	if t, err := fileTail(outPath, LogTailLimit); err == nil {
		res.LogTail = t
	}
	ilog.printf("Eval script finished in %s with exit code %d", res.TestDuration, run.ExitCode)
	if run.TimedOut {
		return &TimeoutError{Timeout: e.cfg.Timeout}
	}
	installNote, err := e.checkInstall(ctx, sb, ilog, ts, installStatus, patch)
	if err != nil {
		return err
	}
	if n, err := sb.OOMKills(ctx); err == nil && n > 0 {
		// Reported for people and for v5's failure classifier.
		res.OOMKills = int(n)
		ilog.printf(oomLine+" %d process(es) of the tests (memory limit %d bytes)", n, sb.Spec().Limits.Memory)
	}
	if e.cfg.LogDiffs {
		e.logDiff(ctx, sb, ilog, workdir, "after")
	}

	var evidence *strict.Evidence
	if sr != nil {
		if evidence, err = sr.collect(ctx, e, sb); err != nil {
			return err
		}
	}
	report, err := e.gradeWith(inst, ts, pred, outPath, true, evidence)
	if err != nil {
		return err
	}
	if err := e.checkNetwork(inst, ts, report, outPath); err != nil {
		ilog.printf("No verdict: %v", err)
		return err
	}
	if installNote != "" {
		report.Notes.Environment = append(report.Notes.Environment, installNote)
		res.Warning = installNote
	}
	if err := writeFileAtomic(filepath.Join(dir, "report.json"), report.Encode()); err != nil {
		return err
	}
	fillFromInstanceReport(res, report)
	ilog.printf("report.json written: resolved=%v", report.Resolved)
	return nil
}

// sandboxSpec prepares what the container needs (see [Testbed]): in
// workspace mode the checkout at base_commit, bind-mounted when the engine
// shares the host's files, else copied into a volume by populate once the
// sandbox exists. cleanup removes what was prepared.
func (e *evaluator) sandboxSpec(ctx context.Context, client *sandbox.Client, inst dataset.Instance, ts spec.TestSpec, ilog *instanceLog) (s sandbox.Spec, populate func(context.Context, *sandbox.Sandbox) error, cleanup func() error, err error) {
	cleanup = func() error { return nil }
	tb := e.testbed(client, inst, ts)
	if tb.Checkout == nil {
		return tb.Spec, nil, cleanup, nil
	}
	ws := filepath.Join(e.cfg.WorkDir, e.cfg.RunID, e.modelDir, filepath.Base(filepath.Clean("/"+inst.InstanceID)))
	// A sandbox of an earlier run may have written there.
	if err := fsutil.RemoveAll(ws); err != nil {
		return s, nil, cleanup, fmt.Errorf("clear workspace: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		return s, nil, cleanup, fmt.Errorf("create workspace dir: %w", err)
	}
	cleanup = func() error {
		if e.cfg.KeepWorkspaces {
			return nil
		}
		return fsutil.RemoveAll(ws)
	}
	ilog.printf("Checking out %s at %s...", inst.Repo, inst.Revision())
	co, err := tb.Checkout(ctx, ws)
	if err != nil {
		return s, nil, cleanup, err
	}
	ilog.printf("Checked out %d files (%d bytes) from %s in %s", co.Files, co.Bytes, co.Source, co.Duration.Round(time.Millisecond))
	if !tb.Bind {
		populate = func(ctx context.Context, sb *sandbox.Sandbox) error {
			res, err := tb.CopyCheckout(ctx, sb, ws)
			if err != nil {
				return err
			}
			ilog.printf("Copied the checkout into the container: %d files, %d bytes", res.Files, res.Bytes)
			return nil
		}
		return tb.Spec, populate, cleanup, nil
	}
	s = tb.Spec
	s.Workspace = ws
	// With ShareObjects, the workspace's .git borrows the source's objects
	// by absolute path; mount them read-only at that same path.
	for _, d := range co.ObjectsDirs {
		s.Mounts = append(s.Mounts, sandbox.Mount{Type: "bind", Source: d, Target: d, ReadOnly: true})
	}
	return s, nil, cleanup, nil
}

// copyLimit caps the checkout copied into a container.
const copyLimit = 16 << 30

// workspaceUser is the user the sandbox runs as in workspace mode: the
// invoking user when not root (the files are theirs), else uid 1000, to whom
// the checkout is handed over (owner).
func workspaceUser() (user string, owner *repo.Owner) {
	uid, gid := os.Getuid(), os.Getgid()
	if uid != 0 {
		return fmt.Sprintf("%d:%d", uid, gid), nil
	}
	return sandbox.DefaultUser, &repo.Owner{UID: 1000, GID: 1000}
}

// applyPatch runs the official patch fallbacks (run.PatchCommands when the
// family's harness has its own) on the patch at path, in run's directory;
// the first that exits 0 wins. Each command run is added to
// res.PatchAttempts.
func (e *evaluator) applyPatch(ctx context.Context, sb *sandbox.Sandbox, ilog *instanceLog, res *InstanceResult, run spec.Procedure, path string) (string, error) {
	attempts, err := run.Patches(e.cfg.Rules, path)
	if err != nil {
		return "", err
	}
	official := run.PatchCommands == nil
	argv2req := func(argv []string, timeout time.Duration) sandbox.ExecRequest {
		return sandbox.ExecRequest{Cmd: argv, WorkingDir: run.Dir(), Timeout: timeout}
	}
	var outputs []string
	for i, argv := range attempts {
		if i > 0 && e.rules == harness.V5 && official {
			for _, reset := range spec.ResetCommands() {
				if _, err := e.exec(ctx, sb, argv2req(reset, patchTimeout)); err != nil {
					return "", err
				}
			}
		}
		r, err := e.exec(ctx, sb, argv2req(argv, patchTimeout))
		if err != nil {
			return "", err
		}
		res.PatchAttempts = append(res.PatchAttempts, patchAttempt(argv, r))
		cmd := strings.Join(argv, " ")
		if r.ExitCode == 0 && !r.TimedOut {
			ilog.printf("%s:\n%s\n%s", harness.AppliedPatchMarker, cmd, r.Stdout.String()+r.Stderr.String())
			return cmd, nil
		}
		ilog.printf("Failed to apply patch to container: %s", cmd)
		outputs = append(outputs, fmt.Sprintf("$ %s (exit %d)\n%s%s", cmd, r.ExitCode, r.Stdout.String(), r.Stderr.String()))
	}
	if e.rules == harness.V5 && official {
		argv := spec.ReverseCheckCommand(path)
		if r, err := e.exec(ctx, sb, argv2req(argv, patchTimeout)); err == nil && r.ExitCode == 0 {
			res.PatchAttempts = append(res.PatchAttempts, patchAttempt(argv, r))
			ilog.printf("%s: %s", harness.PatchAlreadyAppliedMarker, strings.Join(argv, " "))
			return strings.Join(argv, " "), nil
		}
	}
	ilog.printf("%s:\n%s", harness.PatchApplyFailMarker, strings.Join(outputs, "\n"))
	return "", fmt.Errorf("%w: see run_instance.log", ErrPatchApply)
}

func (e *evaluator) exec(ctx context.Context, sb *sandbox.Sandbox, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	r, err := sb.Exec(ctx, req)
	if err != nil {
		return r, fmt.Errorf("run %s: %w", req.Cmd[0], err)
	}
	return r, nil
}

// logDiff writes the repository's diff to run_instance.log, as the official
// harness does before and after the tests (for people, not for grading).
func (e *evaluator) logDiff(ctx context.Context, sb *sandbox.Sandbox, ilog *instanceLog, workdir, when string) {
	r, err := sb.Exec(ctx, sandbox.ExecRequest{
		Cmd: []string{"git", "-c", "core.fileMode=false", "diff"}, WorkingDir: workdir,
		Timeout: diffTimeout, OutputLimit: 256 << 10,
	})
	if err != nil {
		ilog.printf("Git diff %s: %v", when, err)
		return
	}
	ilog.printf("Git diff %s:\n%s", when, r.Stdout.String())
}

// grade grades test_output.txt into a report; fresh when this attempt has
// just written it (see [GradeRequest.Fresh]).
func (e *evaluator) grade(inst dataset.Instance, ts spec.TestSpec, pred dataset.Prediction, outPath string, fresh bool) (grade.InstanceReport, error) {
	return e.gradeWith(inst, ts, pred, outPath, fresh, nil)
}

// gradeWith is grade with what a strict run left beside the log.
func (e *evaluator) gradeWith(inst dataset.Instance, ts spec.TestSpec, pred dataset.Prediction, outPath string, fresh bool, evidence *strict.Evidence) (grade.InstanceReport, error) {
	raw, err := os.ReadFile(outPath)
	if err != nil {
		return grade.InstanceReport{}, fmt.Errorf("read test output: %w", err)
	}
	return gradeWithSpec(GradeRequest{Instance: inst, Log: raw, Rules: e.rules, PatchIsNone: pred.ModelPatch == nil, Fresh: fresh,
		GradingMode: e.cfg.GradingMode, evidence: evidence}, ts)
}

// regrade re-grades an existing test_output.txt (rewrite mode); false when
// the instance has none.
func (e *evaluator) regrade(inst dataset.Instance, pred dataset.Prediction) (InstanceResult, bool) {
	res := InstanceResult{InstanceID: inst.InstanceID}
	dir, err := e.instanceDir(inst.InstanceID)
	if err != nil {
		return res, false
	}
	outPath := filepath.Join(dir, "test_output.txt")
	if _, err := os.Stat(outPath); err != nil {
		return res, false
	}
	res.LogDir = dir
	if t, err := fileTail(outPath, LogTailLimit); err == nil {
		res.LogTail = t
	}
	ts, err := e.specs[inst.InstanceID].ts, e.specs[inst.InstanceID].err
	var report grade.InstanceReport
	if err == nil {
		report, err = e.grade(inst, ts, pred, outPath, false)
	}
	if err == nil {
		err = e.checkNetwork(inst, ts, report, outPath)
	}
	if err == nil {
		err = writeFileAtomic(filepath.Join(dir, "report.json"), report.Encode())
	}
	if err != nil {
		res.setErr(err)
	} else {
		fillFromInstanceReport(&res, report)
	}
	res.Outcome = outcomeOf(&res)
	e.emit(Event{Kind: EventFinished, InstanceID: inst.InstanceID, Result: &res})
	return res, true
}

// setErr makes res an error instance.
func (res *InstanceResult) setErr(err error) {
	res.Status, res.Err, res.Error = StatusError, err, err.Error()
}

func fillFromInstanceReport(res *InstanceResult, r grade.InstanceReport) {
	res.Report = &r
	res.Status = StatusUnresolved
	if r.Resolved {
		res.Status = StatusResolved
	}
	if ts := r.TestsStatus; ts != nil {
		f, p := ts.FailToPass, ts.PassToPass
		res.FailToPass = Fraction{Passed: len(f.Success), Total: len(f.Success) + len(f.Failure)}
		res.PassToPass = Fraction{Passed: len(p.Success), Total: len(p.Success) + len(p.Failure)}
	}
}

func fillFromReport(res *InstanceResult, b []byte) {
	var r grade.InstanceReport
	if err := r.UnmarshalJSON(b); err != nil {
		res.setErr(fmt.Errorf("unreadable report.json: %w", err))
		return
	}
	fillFromInstanceReport(res, r)
}

// tarFiles is a tar stream of a directory "swebox" holding files, mode 0644.
func tarFiles(files map[string][]byte) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "swebox/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)})
	for name, data := range files {
		name = "swebox/" + name
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)})
		_, _ = tw.Write(data)
	}
	_ = tw.Close()
	return &buf
}
