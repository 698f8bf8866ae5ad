package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// teardownTimeout bounds the engine calls that clean up after a sandbox or a
// command, which run on their own context because the caller's may be done.
// It is generous: an engine removing a hundred containers at once on a slow
// storage driver took over 30 s to answer one removal.
const teardownTimeout = 2 * time.Minute

// keepalive is the main process of a sandbox: it idles until stopped.
// Waiting on a background sleep lets the TERM trap run at once, so Stop does
// not sit out its grace period.
var keepalive = []string{"/bin/sh", "-c", `trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done`}

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
}

// Create starts a sandbox from spec. The caller must Remove (or Close) it.
func (c *Client) Create(ctx context.Context, spec Spec) (*Sandbox, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	id, err := c.createContainer(ctx, spec, keepalive, false)
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{c: c, id: id, spec: spec}
	if err := c.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return nil, errors.Join(c.engineErr("start container", err), sb.Remove(context.WithoutCancel(ctx)))
	}
	c.log.Debug("sandbox created", "id", shortID(id), "image", spec.Image)
	return sb, nil
}

// createContainer creates (not starts) a container for a defaulted spec,
// with stdin open when stdin is set.
//
// The engine may finish creating a container whose request the client
// abandoned, leaving it unknown to the caller, so the request runs on a
// context of its own; when ctx ends meanwhile, the container is removed and
// ctx's error returned.
func (c *Client) createContainer(ctx context.Context, spec Spec, cmd []string, stdin bool) (string, error) {
	labels := c.labels(spec.Labels)
	cfg, hc := c.containerConfig(spec, cmd, labels)
	if stdin {
		cfg.OpenStdin, cfg.StdinOnce, cfg.AttachStdin = true, true, true
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("create container: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	resp, err := c.api.ContainerCreate(cctx, cfg, hc, nil, nil, spec.Name)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", &ImageError{Image: spec.Image, PullErr: err}
		}
		return "", c.engineErr("create container", err)
	}
	if err := ctx.Err(); err != nil {
		return "", errors.Join(fmt.Errorf("create container: %w", err), c.removeContainer(ctx, resp.ID))
	}
	return resp.ID, nil
}

// ID is the container id.
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
	// User overrides the sandbox's, e.g. "1000:1000"; uid 0 needs
	// Relax.Root in the sandbox's spec.
	User string
	// Stdin is copied to the command's standard input, then closed.
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
		return ExecResult{}, &CommandError{Command: "sh", Allowed: s.spec.Policy.commands()}
	}
	req.Cmd = []string{sh, "-c", script}
	return s.exec(ctx, req)
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

func (s *Sandbox) exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if req.User != "" {
		uid, _, err := parseUser(req.User)
		if err != nil {
			return ExecResult{}, &SpecError{Field: "ExecRequest.User", Reason: err.Error()}
		}
		if uid == 0 && !s.spec.Relax.Root {
			return ExecResult{}, &SpecError{Field: "ExecRequest.User", Reason: "uid 0 needs Relax.Root"}
		}
	}
	if err := s.begin(); err != nil {
		return ExecResult{}, err
	}
	defer s.end()

	marker := randomID(8)
	env := []string{markerVar + "=" + marker}
	for k, v := range req.Env {
		env = append(env, k+"="+v)
	}
	user := req.User
	if user == "" {
		user = s.spec.User
	}
	created, err := s.c.api.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		Cmd: req.Cmd, Env: env, WorkingDir: req.WorkingDir, User: user,
		AttachStdin: req.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return ExecResult{}, s.notRunningErr(ctx, s.c.engineErr("create exec", err))
	}
	// The hijacked connection lives on its own context: it is closed
	// explicitly, after the command's processes are gone.
	start := time.Now()
	hj, err := s.c.api.ContainerExecAttach(context.WithoutCancel(ctx), created.ID, container.ExecAttachOptions{})
	if err != nil {
		return ExecResult{}, s.notRunningErr(ctx, s.c.engineErr("start exec", err))
	}
	defer hj.Close()

	outBuf, errBuf, copied := pump(hj, req)
	waitCtx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	res := ExecResult{}
	var runErr error
	watchCtx, stopWatch := context.WithCancel(waitCtx)
	defer stopWatch()
	exited := s.watchExit(watchCtx, created.ID)
	select {
	case <-copied:
	case <-exited:
		// The command is gone but something it started in the background
		// may still hold the output open; take what is buffered and go.
		select {
		case <-copied:
		case <-time.After(200 * time.Millisecond):
		}
	case <-waitCtx.Done():
		res.TimedOut = true
		if ctx.Err() != nil {
			runErr = fmt.Errorf("exec %q: %w", req.Cmd[0], ctx.Err())
		}
		if err := s.killCommand(marker, user); err != nil {
			runErr = errors.Join(runErr, err)
		}
		select {
		case <-copied:
		case <-time.After(time.Second):
		}
	}
	_ = hj.Conn.Close()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()

	icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	info, err := s.c.api.ContainerExecInspect(icx, created.ID)
	if err != nil {
		return res, errors.Join(runErr, s.inspectExecErr(icx, err, req.Cmd[0], res.Stdout))
	}
	if !res.TimedOut {
		if err := s.checkStarted(icx, info, req.Cmd[0], res.Stdout); err != nil {
			return ExecResult{}, errors.Join(runErr, err)
		}
	}
	res.ExitCode = info.ExitCode
	if info.Running && !res.TimedOut {
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

// isRunning reports whether the sandbox's container is running; an engine
// that cannot answer counts as running, so that its error surfaces instead.
func (s *Sandbox) isRunning(ctx context.Context) bool {
	info, err := s.c.api.ContainerInspect(ctx, s.id)
	if err != nil {
		return !cerrdefs.IsNotFound(err)
	}
	return info.State != nil && info.State.Running
}

// checkStarted returns an [ErrNotRunning] error when an exec that has ended
// never had a process because the container stopped first. The engine
// accepts such an exec and writes why it failed into the output stream, so
// without this check it would read as a command that printed that line and
// exited 0.
func (s *Sandbox) checkStarted(ctx context.Context, info container.ExecInspect, cmd string, stdout Output) error {
	if info.Pid != 0 || info.Running || s.isRunning(ctx) {
		return nil
	}
	return fmt.Errorf("%w: exec %q did not start: %s", ErrNotRunning, cmd, strings.TrimSpace(stdout.String()))
}

// inspectExecErr explains a failed exec inspection. The engine forgets a
// container's execs when the container stops, so a missing exec in a
// stopped container is an [ErrNotRunning] error.
func (s *Sandbox) inspectExecErr(ctx context.Context, err error, cmd string, stdout Output) error {
	if !cerrdefs.IsNotFound(err) || s.isRunning(ctx) {
		return s.c.engineErr("inspect exec", err)
	}
	msg := "the container stopped while it ran"
	if out := strings.TrimSpace(stdout.String()); out != "" {
		msg += "; output: " + lastLine(out)
	}
	return fmt.Errorf("%w: exec %q: %s", ErrNotRunning, cmd, msg)
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// notRunningErr marks err with [ErrNotRunning] when the container has
// stopped, which is why the engine refuses execs.
func (s *Sandbox) notRunningErr(ctx context.Context, err error) error {
	icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	if s.isRunning(icx) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNotRunning, err)
}

// pump copies a hijacked connection's multiplexed output into capped
// buffers (and the request's live writers) and req.Stdin into it. copied is
// closed when the output ends.
func pump(hj types.HijackedResponse, req ExecRequest) (outBuf, errBuf *capBuffer, copied <-chan struct{}) {
	outBuf, errBuf = newCapBuffer(req.OutputLimit), newCapBuffer(req.OutputLimit)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = stdcopy.StdCopy(streamWriter(outBuf, req.Stdout), streamWriter(errBuf, req.Stderr), hj.Reader)
	}()
	if req.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, req.Stdin)
			_ = hj.CloseWrite()
		}()
	}
	return outBuf, errBuf, done
}

// withTimeout bounds ctx by timeout when it is positive.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// watchExit closes the returned channel once the exec is no longer running.
// It polls with backoff; the attach stream usually ends first.
func (s *Sandbox) watchExit(ctx context.Context, execID string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		delay := 50 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			info, err := s.c.api.ContainerExecInspect(ctx, execID)
			if err == nil && !info.Running {
				close(done)
				return
			}
			delay = min(delay*2, time.Second)
		}
	}()
	return done
}

// Stop asks the sandbox's processes to end, then kills them after grace.
func (s *Sandbox) Stop(ctx context.Context, grace time.Duration) error {
	secs := int(grace.Seconds())
	if err := s.c.api.ContainerStop(ctx, s.id, container.StopOptions{Timeout: &secs}); err != nil && !cerrdefs.IsNotFound(err) {
		return s.c.engineErr("stop container", err)
	}
	return nil
}

// Kill sends signal (e.g. "KILL", "TERM") to the sandbox's main process.
func (s *Sandbox) Kill(ctx context.Context, signal string) error {
	if signal == "" {
		signal = "KILL"
	}
	if err := s.c.api.ContainerKill(ctx, s.id, signal); err != nil && !isNotRunning(err) {
		return s.c.engineErr("kill container", err)
	}
	return nil
}

// Remove kills and removes the container with its anonymous volumes. It is
// idempotent, and runs on its own short context when ctx is already done.
func (s *Sandbox) Remove(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.c.removeContainer(ctx, s.id)
}

// Close removes the sandbox. Safe to call twice.
func (s *Sandbox) Close() error { return s.Remove(context.Background()) }

func (c *Client) removeContainer(ctx context.Context, id string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	err := c.api.ContainerRemove(rctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !isRemovalInProgress(err) {
		return c.engineErr("remove container", err)
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
	rc, err := c.api.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: req.Tail})
	if err != nil {
		return Output{}, Output{}, c.engineErr("read logs", err)
	}
	defer rc.Close()
	ob, eb := newCapBuffer(req.Limit), newCapBuffer(req.Limit)
	if _, err := stdcopy.StdCopy(ob, eb, rc); err != nil {
		return ob.Output(), eb.Output(), fmt.Errorf("read logs: %w", err)
	}
	return ob.Output(), eb.Output(), nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
