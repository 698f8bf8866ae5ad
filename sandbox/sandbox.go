package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// teardownTimeout bounds the engine calls that clean up after a sandbox or a
// command, which run on their own context because the caller's may be done.
// It is generous: an engine removing a hundred containers at once on a slow
// storage driver took over 30 s to answer one removal.
const teardownTimeout = seam.TeardownTimeout

// keepalive is the main process of a sandbox: it idles until stopped.
var keepalive = seam.Keepalive

// Sandbox is a running container that commands are executed in. Its methods
// are safe for concurrent use.
type Sandbox struct {
	c    *Client
	id   string
	spec Spec

	mu       sync.Mutex
	closed   bool
	unusable error
	active   int   // commands running now, internal ones included
	oomSeen  int64 // oom_kill count of the container's memory cgroup last read

	agent *sandboxAgent // nil: commands go through the backend's exec
	// agentDir holds the socket directory mounted into the sandbox, used
	// or not; it goes with the sandbox, never before: the engine resolves
	// every mount of a container for its archive endpoint (CopyIn,
	// CopyOut), and fails on a bind whose source is gone.
	agentDir *sandboxAgent
	// release ends the client's lease on the sandbox (lease.go); nil
	// without one.
	release func()
	// stopDisk ends the watch on a writable root's size (disk.go);
	// diskErr is set when the watch killed the sandbox.
	stopDisk func()
	diskErr  *DiskLimitError
}

// Create starts a sandbox from spec. The caller must Remove (or Close) it.
func (c *Client) Create(ctx context.Context, spec Spec) (*Sandbox, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	if c.pool != nil {
		if sb := c.pool.take(spec); sb != nil {
			return sb, nil
		}
	}
	return c.create(ctx, spec)
}

// create starts a sandbox from a defaulted, valid spec.
func (c *Client) create(ctx context.Context, spec Spec) (*Sandbox, error) {
	agent, withAgent, cmd := c.agentFor(spec)
	l, leased := c.b.(leaser)
	if leased {
		cmd = leasedMain(cmd)
	}
	id, err := c.createSandbox(ctx, createRequest{Spec: withAgent, Cmd: cmd, Stdin: leased, Leased: leased})
	if err != nil {
		if agent != nil {
			err = errors.Join(err, agent.remove())
		}
		return nil, err
	}
	sb := &Sandbox{c: c, id: id, spec: spec, agent: agent, agentDir: agent}
	defer func() {
		// A panic (a fault of the engine's client) leaves the caller no
		// sandbox to remove.
		if p := recover(); p != nil {
			_ = sb.Remove(context.WithoutCancel(ctx))
			panic(p)
		}
	}()
	if leased {
		sb.release, err = l.StartLeased(ctx, id)
	} else {
		err = c.b.Start(ctx, id)
	}
	if err != nil {
		return nil, errors.Join(c.engineErr("start sandbox", err), sb.Remove(context.WithoutCancel(ctx)))
	}
	if sb.stopDisk, err = c.watchDisk(ctx, id, spec, sb.tripDisk); err != nil {
		return nil, errors.Join(err, sb.Remove(context.WithoutCancel(ctx)))
	}
	sb.agent = nil
	sb.startAgent(ctx, agent)
	if agent == nil {
		sb.startRemoteAgent(ctx)
	}
	c.log.Debug("sandbox created", "id", shortID(id), "image", spec.Image)
	return sb, nil
}

// createSandbox creates (not starts) the sandbox req describes (a
// defaulted spec, its main process), with the client's labels.
//
// The engine may finish creating a sandbox whose request the client
// abandoned, leaving it unknown to the caller, so the request runs on a
// context of its own; when ctx ends meanwhile, the sandbox is removed and
// ctx's error returned.
func (c *Client) createSandbox(ctx context.Context, req createRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("create sandbox: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	req.Labels = c.labels(req.Spec.Labels)
	id, err := c.b.Create(cctx, req)
	if err != nil {
		if errors.Is(err, errNotFound) {
			return "", &ImageError{Image: req.Spec.Image, PullErr: err}
		}
		return "", c.engineErr("create sandbox", err)
	}
	// The sweep starts once a request has gone through: the Docker client
	// negotiates its API version on its first request and writes the
	// version unguarded, which a request of the sweep's would read
	// meanwhile (the race detector saw it).
	c.startReap()
	if err := ctx.Err(); err != nil {
		return "", errors.Join(fmt.Errorf("create sandbox: %w", err), c.removeSandbox(ctx, id))
	}
	return id, nil
}

// ID is the sandbox's id on its backend (a Docker container id).
func (s *Sandbox) ID() string { return s.id }

// Spec is the sandbox's spec with defaults filled in.
func (s *Sandbox) Spec() Spec { return s.spec }

// ExecRequest is a command to run in a sandbox.
type ExecRequest struct {
	// Cmd is the argv; no shell parses it. Required.
	Cmd []string
	// Env is added to the sandbox's environment for this command.
	Env map[string]string
	// WorkingDir overrides the sandbox's for this command.
	WorkingDir string
	// User overrides the sandbox's, e.g. "1000:1000"; uid 0 or gid 0
	// needs Relax.Root in the sandbox's spec.
	User string
	// Stdin is copied to the command's standard input until it ends
	// (EOF), then the command's input is closed. When the command ends
	// first, the package stops reading Stdin: a Read blocked at that moment
	// is interrupted if Stdin has a SetReadDeadline method (an *os.File
	// pipe, a net.Conn; the deadline is cleared again), else it is left to
	// return on its own and what it returns is dropped. Stdin is never
	// closed; it is the caller's again once Exec returns, apart from such
	// a Read.
	Stdin io.Reader
	// Timeout bounds the command; when it expires every process the command
	// started is killed and the result has TimedOut. Zero: only ctx bounds it.
	Timeout time.Duration
	// Stdout and Stderr receive the output live, besides the result.
	Stdout, Stderr io.Writer
	// OutputLimit is the number of bytes kept per stream (head and tail).
	// Default 1 MiB.
	OutputLimit int
}

// ExecResult is what a command did. A failing, timed-out or killed command is
// described here, not reported as an error.
type ExecResult struct {
	ExitCode  int
	Stdout    Output
	Stderr    Output
	Duration  time.Duration
	TimedOut  bool // the timeout or ctx expired and the command's processes were killed
	OOMKilled bool // the kernel's OOM killer ended a process of the command
	Signal    int  // the signal that ended the command, 0 when it exited
	Usage     Usage
}

// Success reports whether the command exited 0 on its own.
func (r ExecResult) Success() bool { return r.ExitCode == 0 && !r.TimedOut }

// Exec runs req.Cmd in the sandbox. The error is non-nil only when the
// command could not be run or awaited (policy, closed sandbox, engine), or
// when ctx ended; in the last case the result still holds the output so far.
func (s *Sandbox) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if err := s.spec.Policy.Check(req.Cmd); err != nil {
		return ExecResult{}, err
	}
	return s.exec(ctx, req)
}

// Shell runs script with the shell the sandbox's policy admits (sh, bash or
// dash, in that order); a policy without a shell refuses it.
func (s *Sandbox) Shell(ctx context.Context, script string, req ExecRequest) (ExecResult, error) {
	sh := s.spec.Policy.Shell()
	if sh == "" {
		return ExecResult{}, &CommandError{Command: "sh", Allowed: slices.Clone(s.spec.Policy.commands())}
	}
	req.Cmd = []string{sh, "-c", script}
	return s.exec(ctx, req)
}

// isUnusable reports whether the sandbox refuses commands (ErrUnusable).
func (s *Sandbox) isUnusable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unusable != nil
}

func (s *Sandbox) begin() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.unusable != nil {
		return s.unusable
	}
	s.active++
	return nil
}

func (s *Sandbox) end() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
}

func (s *Sandbox) exec(ctx context.Context, req ExecRequest) (res ExecResult, err error) {
	defer func() {
		// A command that the disk watch ended failed for that reason,
		// whatever its exit or its stream's end says.
		if derr := s.diskExceeded(); derr != nil {
			err = derr
		}
	}()
	if req.User != "" {
		uid, gid, err := parseUser(req.User)
		if err != nil {
			return ExecResult{}, &SpecError{Field: "ExecRequest.User", Reason: err.Error()}
		}
		if (uid == 0 || gid == 0) && !s.spec.Relax.Root {
			return ExecResult{}, &SpecError{Field: "ExecRequest.User", Reason: "uid 0 or gid 0 needs Relax.Root"}
		}
	}
	if err := s.begin(); err != nil {
		return ExecResult{}, err
	}
	defer s.end()

	user := req.User
	if user == "" {
		user = s.spec.User
	}
	if res, err, ok := s.execAgent(ctx, req, user); ok {
		return res, err
	}
	marker := randomID(8)
	env := []string{markerVar + "=" + marker}
	for k, v := range req.Env {
		env = append(env, k+"="+v)
	}
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("exec %q: %w", req.Cmd[0], err)
	}
	outBuf, errBuf := newCapBuffer(req.OutputLimit), newCapBuffer(req.OutputLimit)
	call := execCall{
		Cmd: req.Cmd, Env: env, User: user, WorkingDir: req.WorkingDir,
		Stdio: stdio{Stdout: streamWriter(outBuf, req.Stdout), Stderr: streamWriter(errBuf, req.Stderr)},
	}
	if req.Stdin != nil {
		in, stop := feedStdin(req.Stdin)
		defer stop()
		call.Stdin = in
	}
	// The command's streams live on a context of their own: they are
	// closed explicitly, after the command's processes are gone.
	streamCtx, stopStream := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStream()
	type outcome struct {
		st  execStatus
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		st, err := s.c.b.Exec(streamCtx, s.id, call)
		done <- outcome{st, err}
	}()
	waitCtx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res = ExecResult{}
	var runErr error
	var out outcome
	select {
	case out = <-done:
	case <-waitCtx.Done():
		res.TimedOut = true
		if ctx.Err() != nil {
			runErr = fmt.Errorf("exec %q: %w", req.Cmd[0], ctx.Err())
		}
		// The command may not have started when its time ran out (an exec
		// is slow to start on a loaded engine), so the kill is repeated
		// while its stream stays open: a process that started after one
		// kill meets the next. A kill that saw a process of the command
		// shows that its exec had started, and after it nothing of the
		// command can start; otherwise one more kill runs after the stream
		// ended, for an exec that started after the last kill and ended by
		// itself, leaving processes behind, or whose stream failed with
		// its start still under way. So does one after a stream that we
		// closed, which leaves that start in flight too.
		got, saw, closed := false, false, false
	kill:
		for attempt := 1; ; attempt++ {
			found, err := s.killCommand(marker, user)
			if err != nil {
				runErr = errors.Join(runErr, err)
				break
			}
			saw = saw || found
			if s.isUnusable() {
				break // the container was killed: its streams end
			}
			select {
			case out = <-done:
				got = true
				break kill
			case <-time.After(time.Second):
				if attempt < killAttempts {
					continue
				}
				stopStream()
				out, got, closed = <-done, true, true
				break kill
			}
		}
		if !s.isUnusable() && (closed || !saw || out.err != nil) {
			if _, err := s.killCommand(marker, user); err != nil {
				runErr = errors.Join(runErr, err)
			}
		}
		if !got {
			out = <-done
		}
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()

	icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	if out.err != nil {
		if res.TimedOut && s.isUnusable() {
			// The kill of the command's processes gave up and the
			// container was killed under the stream: the command timed
			// out, and the sandbox refuses further commands.
			return res, runErr
		}
		return res, errors.Join(runErr, s.execErr(icx, out.err, req.Cmd[0], res.Stdout))
	}
	if (out.st.NoProcess || s.c.onPodman() && podmanStartFailed(out.st.ExitCode, res)) && !res.TimedOut {
		if running, why := s.stopped(icx); !running {
			return ExecResult{}, errors.Join(runErr, notStarted(req.Cmd[0], why, res.Stdout))
		}
		return s.startFailed(icx, call, req.Stderr, res), runErr
	}
	res.ExitCode = out.st.ExitCode
	if out.st.Running && !res.TimedOut {
		// The stream closed early while the process lives on: report it as
		// still running rather than as exit code 0.
		res.ExitCode = -1
	}
	if res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = res.ExitCode - 128
	}
	if res.Signal == 9 && !res.TimedOut {
		res.OOMKilled = s.oomKilledSince(icx)
	}
	return res, runErr
}

// isRunning reports whether the sandbox's main process runs; a backend that
// cannot answer counts as running, so that its error surfaces instead.
func (s *Sandbox) isRunning(ctx context.Context) bool {
	running, _, _ := s.mainState(ctx)
	return running
}

// mainState reads the main process's state for isRunning and stopped;
// gone is set when the sandbox no longer exists.
func (s *Sandbox) mainState(ctx context.Context) (running bool, st State, gone bool) {
	st, err := s.c.b.Inspect(ctx, s.id)
	if err != nil {
		gone = errors.Is(err, errNotFound)
		return !gone, st, gone
	}
	return st.Running, st, false
}

// stopped is isRunning that also says, when the main process does not run,
// what the backend knows of its end: its exit status, the OOM killer, and
// the last line it wrote, so that an ErrNotRunning error explains itself.
// Only a sandbox found stopped costs the read of its log.
func (s *Sandbox) stopped(ctx context.Context) (running bool, why string) {
	running, st, gone := s.mainState(ctx)
	switch {
	case gone:
		return false, "the sandbox no longer exists"
	case running:
		return true, ""
	}
	why = fmt.Sprintf("its main process exited with status %d", st.ExitCode)
	if st.OOMKilled {
		why += ", killed by the kernel's OOM killer"
	}
	var out strings.Builder
	if err := s.c.b.Logs(ctx, s.id, "1", &out, &out); err == nil {
		if line := strings.TrimSpace(out.String()); line != "" {
			why += fmt.Sprintf(", last writing %q", lastLine(line))
		}
	}
	return false, why
}

// notStarted is the error of a command that did not start because the
// sandbox stopped; stdout holds the engine's message.
func notStarted(cmd, why string, stdout Output) error {
	return fmt.Errorf("%w (%s): exec %q did not start: %s", ErrNotRunning, why, cmd, strings.TrimSpace(stdout.String()))
}

// State reports the state of the sandbox's main process.
func (s *Sandbox) State(ctx context.Context) (State, error) {
	st, err := s.c.b.Inspect(ctx, s.id)
	if err != nil {
		return State{}, s.c.engineErr("inspect sandbox", err)
	}
	return st, nil
}

// execErr explains a failed exec. An engine refuses execs in a stopped
// sandbox, and forgets the execs of a sandbox that stops, so an exec that
// failed in a sandbox that no longer runs is an [ErrNotRunning] error; the
// engine's own message never passes for the command's output.
func (s *Sandbox) execErr(ctx context.Context, err error, cmd string, stdout Output) error {
	running, why := s.stopped(ctx)
	if running {
		return s.c.engineErr("exec "+cmd, err)
	}
	msg := "the sandbox is not running: " + why
	if out := strings.TrimSpace(stdout.String()); out != "" {
		msg += "; output: " + lastLine(out)
	}
	return fmt.Errorf("%w: exec %q: %s: %w", ErrNotRunning, cmd, msg, err)
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// withTimeout bounds ctx by timeout when it is positive.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// Stop asks the sandbox's processes to end, then kills them after grace.
func (s *Sandbox) Stop(ctx context.Context, grace time.Duration) error {
	if err := s.c.b.Stop(ctx, s.id, grace); err != nil && !errors.Is(err, errNotFound) {
		return s.c.engineErr("stop sandbox", err)
	}
	return nil
}

// Kill sends signal (e.g. "KILL", "TERM") to the sandbox's main process.
func (s *Sandbox) Kill(ctx context.Context, signal string) error {
	if signal == "" {
		signal = "KILL"
	}
	if err := s.c.b.Kill(ctx, s.id, signal); err != nil && !isNotRunning(err) {
		return s.c.engineErr("kill sandbox", err)
	}
	return nil
}

// Remove kills and removes the sandbox with the storage only it used. It is
// idempotent, and runs on its own short context when ctx is already done.
func (s *Sandbox) Remove(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.stopDisk != nil {
		s.stopDisk()
	}
	err := s.c.removeSandbox(ctx, s.id)
	if s.release != nil {
		s.release()
	}
	if s.agentDir != nil {
		err = errors.Join(err, s.agentDir.remove())
	}
	return err
}

// Close removes the sandbox. Safe to call twice.
func (s *Sandbox) Close() error { return s.Remove(context.Background()) }

func (c *Client) removeSandbox(ctx context.Context, id string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	// Gone is done; a conflict is a removal already under way.
	if err := c.b.Remove(rctx, id); err != nil && !isNotRunning(err) {
		return c.engineErr("remove sandbox", err)
	}
	c.log.Debug("sandbox removed", "id", shortID(id))
	return nil
}

// LogsRequest selects a sandbox's main-process logs.
type LogsRequest struct {
	Tail  string // "all" or a number of lines. Default all.
	Limit int    // bytes kept per stream. Default 1 MiB.
}

// Logs returns the output of the sandbox's main process (not of Exec
// commands, whose output is in their results).
func (s *Sandbox) Logs(ctx context.Context, req LogsRequest) (stdout, stderr Output, err error) {
	return s.c.logs(ctx, s.id, req)
}

func (c *Client) logs(ctx context.Context, id string, req LogsRequest) (stdout, stderr Output, err error) {
	ob, eb := newCapBuffer(req.Limit), newCapBuffer(req.Limit)
	if err := c.b.Logs(ctx, id, req.Tail, ob, eb); err != nil {
		return ob.Output(), eb.Output(), c.engineErr("read logs", err)
	}
	return ob.Output(), eb.Output(), nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
