package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Run creates a sandbox from spec, runs req.Cmd as its main process and
// removes it. Teardown always happens: on success, on failure, when ctx is
// cancelled and when the calling goroutine panics. A timeout kills the whole
// sandbox, so no process of the command survives.
//
// req.WorkingDir and req.User override the spec's; req.Env adds to it.
//
// On Podman the command runs over the client's transport (the exec agent
// or the engine's exec) in a sandbox whose main process idles, as a pooled
// Run's does, and the sandbox is removed once the command has ended: Podman
// 4 with conmon before 2.1.13 never reports a container's OOM kill (conmon
// writes its marker into its own working directory, where Podman does not
// look), and a container's cgroup, whose OOM kill counter tells it instead,
// is gone once its main process has ended. The result is the one Run gives
// on Docker: exit status, signal, output, stdin, timeout and OOMKilled; the
// command's process limit is the same (the idle main process's two
// processes are added to PidsLimit), and a program that cannot start exits
// 127 or 126, as on Docker. The command is not a child of the sandbox's
// init, and the idle main process (about 0.5 MiB) and the exec agent, where
// used (about 2 MiB), count against the memory limit.
func (c *Client) Run(ctx context.Context, spec Spec, req ExecRequest) (res ExecResult, err error) {
	if err := spec.Policy.Check(req.Cmd); err != nil {
		return ExecResult{}, err
	}
	if res, err, ok := c.runPooled(ctx, spec, req); ok {
		return res, err
	}
	if req.WorkingDir != "" {
		spec.WorkingDir = req.WorkingDir
	}
	if req.User != "" {
		spec.User = req.User
	}
	if len(req.Env) > 0 {
		env := make(map[string]string, len(spec.Env)+len(req.Env))
		for k, v := range spec.Env {
			env[k] = v
		}
		for k, v := range req.Env {
			env[k] = v
		}
		spec.Env = env
	}
	if err := spec.Validate(); err != nil {
		return ExecResult{}, err
	}
	spec = spec.withDefaults()
	if c.runsThroughExec(ctx) {
		return c.runInSandbox(ctx, spec, req)
	}

	id, err := c.createSandbox(ctx, createRequest{Spec: spec, Cmd: req.Cmd, Stdin: req.Stdin != nil})
	if err != nil {
		return ExecResult{}, err
	}
	defer func() {
		rerr := c.removeSandbox(ctx, id)
		if p := recover(); p != nil {
			panic(p)
		}
		err = errors.Join(err, rerr)
	}()

	outBuf, errBuf := newCapBuffer(req.OutputLimit), newCapBuffer(req.OutputLimit)
	streams := stdio{Stdout: streamWriter(outBuf, req.Stdout), Stderr: streamWriter(errBuf, req.Stderr)}
	if req.Stdin != nil {
		in, stop := feedStdin(req.Stdin)
		defer stop()
		streams.Stdin = in
	}
	start := time.Now()
	mp, err := c.b.StartAttached(ctx, id, streams)
	if err != nil {
		return ExecResult{}, c.engineErr("run sandbox", err)
	}
	defer mp.Release()
	var tripped *DiskLimitError
	var trippedMu sync.Mutex
	stopDisk, err := c.watchDisk(ctx, id, spec, func(e *DiskLimitError) {
		trippedMu.Lock()
		tripped = e
		trippedMu.Unlock()
		kctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
		defer cancel()
		_ = c.b.Kill(kctx, id, "KILL")
	})
	if err != nil {
		return ExecResult{}, err
	}
	defer func() {
		stopDisk()
		trippedMu.Lock()
		defer trippedMu.Unlock()
		if tripped != nil {
			err = tripped
		}
	}()
	waitCtx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	var runErr error
	select {
	case e := <-mp.Exited:
		if e.Err != nil {
			return ExecResult{}, c.engineErr("run sandbox", e.Err)
		}
		res.ExitCode = e.Code
	case <-waitCtx.Done():
		res.TimedOut = true
		if ctx.Err() != nil {
			runErr = fmt.Errorf("run %q: %w", req.Cmd[0], ctx.Err())
		}
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if err := c.b.Kill(kctx, id, "KILL"); err != nil && !isNotRunning(err) {
			runErr = errors.Join(runErr, c.engineErr("kill sandbox", err))
		}
		select {
		case e := <-mp.Exited:
			res.ExitCode = e.Code
		case <-time.After(3 * time.Second):
			res.ExitCode = -1
		}
	}
	mp.Release()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()
	if res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = res.ExitCode - 128
	}
	if res.Signal == 9 && !res.TimedOut {
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if st, err := c.b.Inspect(ictx, id); err == nil {
			res.OOMKilled = st.OOMKilled
		}
	}
	return res, runErr
}

// keepaliveProcs is how many processes a sandbox's idle main process has
// besides the init process: the shell and its background sleep or read.
const keepaliveProcs = 2

// runInSandbox is Run through a sandbox's exec (runsThroughExec): spec, a
// defaulted valid spec with req's working directory, user and environment
// in it, gets a sandbox, as a pooled Run's, which runs req.Cmd over the
// client's transport and is removed. The exec agent, where the client uses
// it, leaves no exec session on the engine (Podman keeps each one's monitor
// for its exit_command_delay, 5 minutes by default, after it ended). The
// sandbox's process limit is raised by its main process's own processes,
// so the command may start as many as it may as the main process of a
// container with spec's limit.
func (c *Client) runInSandbox(ctx context.Context, spec Spec, req ExecRequest) (res ExecResult, err error) {
	if spec.Limits.PidsLimit > 0 {
		spec.Limits.PidsLimit += keepaliveProcs
	}
	sb, err := c.create(ctx, spec)
	if err != nil {
		return ExecResult{}, err
	}
	defer func() {
		rerr := sb.Remove(ctx)
		if p := recover(); p != nil {
			panic(p)
		}
		err = errors.Join(err, rerr)
	}()
	// The working directory, user and environment are the sandbox's.
	return sb.exec(ctx, ExecRequest{
		Cmd: req.Cmd, Stdin: req.Stdin, Timeout: req.Timeout,
		Stdout: req.Stdout, Stderr: req.Stderr, OutputLimit: req.OutputLimit,
	})
}

// runsThroughExec reports whether Run serves its command through a
// sandbox's exec (runInSandbox): on Podman, whose state never says that a
// container's main process was OOM-killed (Run). An engine that cannot be
// asked is left to the create, which reports it.
func (c *Client) runsThroughExec(ctx context.Context) bool {
	d, ok := c.b.(*dockerBackend)
	if !ok {
		return false
	}
	f, err := d.facts(ctx)
	return err == nil && f.podman
}
