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
