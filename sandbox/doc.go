// Package sandbox runs untrusted commands in hardened sandboxes: Docker
// containers through the Docker Engine API, or Kubernetes Pods through the
// backend of package sandbox/kube ([WithBackend]).
//
// A [Client] talks to one engine through a backend (DOCKER_HOST,
// DOCKER_CERT_PATH and DOCKER_API_VERSION are honoured; the API version is
// negotiated). [Client.Create]
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
// The package's API speaks its own types only; no engine's wire types appear
// in it, and everything but translating a Spec into the engine's objects is
// the same on every backend: Spec validation and defaults, the command
// policy, output caps, timeouts and the kill of a command's process tree,
// [ErrNotRunning] detection, the path checks of copies, and teardown. The
// image operations ([Client.EnsureImage], [Client.BuildImage], ...) are the
// Docker engine's; a backend without them answers [ErrNotSupported]. [New]
// uses the Docker engine unless [WithBackend] gives another.
//
// On a local Docker engine (unless [WithExecAgent] turns it off), commands
// do not go through the engine at all: every sandbox runs an exec agent (a small static Linux binary embedded in the
// package, mounted read-only) reached over a Unix
// socket in a private per-sandbox host directory. A warm exec then takes
// milliseconds instead of tens of them (BENCHMARKS.md), and the result says what the
// command's processes used ([ExecResult.Usage]). The agent runs as the
// sandbox's user, adds no capability and holds no secret; no process in the
// sandbox can reach its socket or trace it (it is non-dumpable); each command gets
// a process group of its own under a subreaper shim, so a timeout kills
// exactly the command's process tree without looking for markers. Where the
// agent cannot run or be reached (a remote engine, gVisor on Docker, an
// image it cannot run in, a command as another user, an agent a command
// killed), Exec falls back to the engine's
// exec with the same results. Pods on Kubernetes run the same agent, copied
// in at start and reached over a port-forward (sandbox/kube). [WithPool] keeps sandboxes started ahead of
// need, so that Create and a one-shot Run skip the engine's create and
// start; each pooled sandbox serves exactly one caller.
//
// An engine cannot kill one exec; when a command's timeout or context expires,
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
// On Kubernetes (package sandbox/kube, given to [New] with [WithBackend]) a
// sandbox is a Pod with each default mapped to a Pod field; that package's
// documentation says how. Importing sandbox links no Kubernetes package.
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
