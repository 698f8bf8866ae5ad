package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
)

// Run creates a sandbox from spec, runs req.Cmd as its main process and
// removes it. Teardown always happens: on success, on failure, when ctx is
// cancelled and when the calling goroutine panics. A timeout kills the whole
// container, so no process of the command survives.
//
// req.WorkingDir and req.User override the spec's; req.Env adds to it.
func (c *Client) Run(ctx context.Context, spec Spec, req ExecRequest) (res ExecResult, err error) {
	if err := spec.Policy.Check(req.Cmd); err != nil {
		return ExecResult{}, err
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

	id, err := c.createContainer(ctx, spec, req.Cmd, req.Stdin != nil)
	if err != nil {
		return ExecResult{}, err
	}
	defer func() {
		rerr := c.removeContainer(ctx, id)
		if p := recover(); p != nil {
			panic(p)
		}
		err = errors.Join(err, rerr)
	}()

	hj, err := c.api.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true, Stdin: req.Stdin != nil})
	if err != nil {
		return ExecResult{}, c.engineErr("attach container", err)
	}
	defer hj.Close()
	waitC, waitErrC := c.api.ContainerWait(context.WithoutCancel(ctx), id, container.WaitConditionNextExit)

	start := time.Now()
	if err := c.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return ExecResult{}, c.engineErr("start container", err)
	}
	outBuf, errBuf, copied := pump(hj, req)
	waitCtx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	var runErr error
	select {
	case w := <-waitC:
		res.ExitCode = int(w.StatusCode)
		<-copied
	case err := <-waitErrC:
		return ExecResult{}, c.engineErr("wait for container", err)
	case <-waitCtx.Done():
		res.TimedOut = true
		if ctx.Err() != nil {
			runErr = fmt.Errorf("run %q: %w", req.Cmd[0], ctx.Err())
		}
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if err := c.api.ContainerKill(kctx, id, "KILL"); err != nil && !isNotRunning(err) {
			runErr = errors.Join(runErr, c.engineErr("kill container", err))
		}
		select {
		case w := <-waitC:
			res.ExitCode = int(w.StatusCode)
		case <-time.After(2 * time.Second):
			res.ExitCode = -1
		}
		select {
		case <-copied:
		case <-time.After(time.Second):
		}
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()
	if res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = res.ExitCode - 128
	}
	if res.Signal == 9 && !res.TimedOut {
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if info, err := c.api.ContainerInspect(ictx, id); err == nil && info.State != nil {
			res.OOMKilled = info.State.OOMKilled
		}
	}
	return res, runErr
}
