// Package agent is the toolkit code-writing agents use, on top of the
// hardened sandboxes of package sandbox: run a snippet, keep a workspace
// across calls, install packages, pass files in and get artifacts out, reach
// a few hosts, use secrets without leaking them, read what went wrong and
// check a function against test cases.
//
// Every sandbox keeps the sandbox package's defaults: no network, read-only
// root file system, user 1000, no capabilities, resource limits. A failing,
// timed-out or OOM-killed program is data in its [Result] (with [Kind],
// the parsed traceback and the peak memory); a Go error means the
// infrastructure failed or an option was wrong.
//
//	c, err := sandbox.New()
//	if err != nil { ... }
//	m, err := agent.New(c, agent.WithSecretResolver(secrets.Static{"gh": token}))
//	if err != nil { ... }
//	defer m.Close()
//
//	// One-shot: a fresh workspace and container, removed afterwards.
//	res, err := m.RunPython(ctx, "import pandas\nprint(pandas.__version__)", agent.RunOptions{
//		SandboxOptions: agent.SandboxOptions{
//			Requirements: agent.Requirements{Packages: []string{"pandas"}, WheelDir: "/srv/wheels"},
//			Files:        []agent.File{{Name: "data.csv", HostPath: "/data/in.csv"}},
//		},
//		Timeout: 30 * time.Second,
//	})
//	if err != nil { ... }
//	if !res.OK() {
//		for _, hint := range diagnose.Feedback(res) { fmt.Println(hint) }
//	}
//
//	// A session: one workspace and one container across calls.
//	s, err := m.Open(ctx, "task-42", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{
//		Egress:  egress.Allowlist{Hosts: []string{"api.github.com"}},
//		Secrets: map[string]string{"GITHUB_TOKEN": "gh"},
//	}})
//	if err != nil { ... }
//	res, err = s.RunPython(ctx, "open('output/report.md', 'w').write('# done')", agent.ExecOptions{})
//	rep, err := s.RunTests(ctx, agent.TestRequest{Code: code, Function: "solve",
//		Cases: []agent.TestCase{{Args: []any{2, 3}, Expected: 5}}}, agent.ExecOptions{})
//
// # Parts
//
// The package is the core: the [Manager], its sessions and runs. Parts with
// one job each live beside it:
//
//   - [github.com/swebox/swebox/agent/egress]: the allowlisting HTTP and
//     CONNECT proxy behind [SandboxOptions.Egress] (standard library only).
//   - [github.com/swebox/swebox/agent/traceback]: Python tracebacks read
//     from stderr, as in [Result.Error] (standard library only).
//   - [github.com/swebox/swebox/agent/secrets]: the resolvers that
//     [WithSecretResolver] takes (standard library only).
//   - [github.com/swebox/swebox/agent/diagnose]: suggestions for the next
//     attempt from a [Result] or a [TestReport].
//
// # Pieces
//
// [Manager.RunPython] and [Manager.RunShell] pass the code as a file in the
// workspace (never through a shell's quoting) and run it behind a small
// launcher that exports secrets, activates the virtual environment, relays
// egress and records the peak memory ([RunPython] and [RunShell] do the same
// with a manager of their own). Sessions ([Manager.Create], [Manager.Get],
// [Manager.Open], [Manager.List], [Manager.Remove]) keep a workspace and a
// container; an idle session is reaped, a Persistent one only loses its
// container and can be resumed by another manager on the same state
// directory. [Session.Close] ends a session as [Manager.Close] does;
// [Session.Remove] also deletes a persistent one. A persistent session's record
// (session.json in its directory) is replaced atomically: written to a
// temporary file, synced, renamed over the old one, and the directory
// synced; a crash leaves the old record or the new one, never part of one,
// and the next manager on the directory removes the temporary file.
//
// A warm pool ([WithPool] for the manager's own client, or a client made
// with sandbox.WithPool) makes one-shot runs and new sessions that are not
// persistent and grant no egress take a started sandbox, each with a
// workspace of its own, instead of starting one; the [Manager] says which
// runs do and why the others do not.
//
// [Requirements] build a virtual environment in a container of their own,
// offline from a wheel directory or from an index the install step alone
// may reach; environments are cached by the hash of image, packages and
// source. [File] values go into mounts/, files written under output/ come
// back as [Artifact] values, capped, never read through a symlink.
//
// Egress keeps the sandbox without a network interface and relays
// 127.0.0.1 connections to an egress.Proxy the manager runs on a Unix
// socket, which admits the listed hosts only and never link-local or
// metadata addresses. It needs python3 in the image and runc: gVisor's
// runsc, registered with --network=none, cannot reach the socket.
//
// Secrets are resolved by a secrets.Resolver, copied as files onto the
// sandbox's /tmp tmpfs and exported by the launcher, so docker inspect never
// shows them; their values are masked in every result.
//
// [Manager.RunTests] runs a function against [TestCase] values as
// parametrized pytest tests, each call in a child process that never sees
// the expected values, and reads the verdicts from pytest's report with
// package pytestparse. diagnose.Feedback and diagnose.TestFeedback turn
// results into short suggestions for the next attempt.
package agent
