// Package sandbox runs untrusted commands in hardened Docker containers
// through the Docker Engine API.
//
// A [Client] talks to one engine (DOCKER_HOST, DOCKER_CERT_PATH and
// DOCKER_API_VERSION are honoured; the API version is negotiated). [Client.Create]
// starts a [Sandbox] from a [Spec]; [Sandbox.Exec] runs an argv in it and
// returns an [ExecResult]: stdout and stderr kept apart and capped (head and
// tail), exit code, duration, and whether the command timed out, was killed
// by a signal or by the OOM killer. A failing command is data in the result;
// an error means the infrastructure failed. [Client.Run] is the one-shot
// form: create, run, remove, whatever happens.
//
// Every sandbox is hardened unless its Spec relaxes it, visibly, in
// [Spec.Relax]: no network, read-only root filesystem, uid 1000:1000, all
// capabilities dropped, no-new-privileges, an init process, pids, memory
// (without swap), CPU, open-file and file-size limits, a size-limited tmpfs
// at /tmp with HOME=/tmp/home, capped logs, and labels (swebox.managed,
// swebox.session) on everything created, so [Client.Prune] finds leftovers.
// [Policy] checks each command's name against an allowlist before any
// engine call.
//
// Docker cannot kill one exec; when a command's timeout or context expires,
// every process it started (also after setsid or double forks) is found by
// a marker in its environment and killed, and the sandbox stays usable, or,
// when that cannot be shown, the container is killed and further commands
// fail with [ErrUnusable].
//
// A command that cannot start, or whose record the engine drops, because
// the container has stopped (its main process ended, or a command killed
// it) fails with [ErrNotRunning]: the engine's own message never passes for
// the command's output.
//
// Usage:
//
//	c, err := sandbox.New()
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	sb, err := c.Create(ctx, sandbox.Spec{Image: "swebox/python:bookworm", Workspace: dir})
//	if err != nil {
//		return err
//	}
//	defer sb.Close()
//	res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"pytest", "-q"}, Timeout: time.Minute})
//	if err != nil {
//		return err // the engine failed, not the tests
//	}
//	fmt.Println(res.ExitCode, res.TimedOut, res.Stdout.String())
package sandbox
