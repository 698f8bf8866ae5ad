package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swebox/swebox/sandbox/internal/agentbin"
	"github.com/swebox/swebox/sandbox/internal/execagent"
	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Where the exec agent lives inside a sandbox: its binary, mounted
// read-only, and the directory of its socket, a per-sandbox host directory
// mounted read-write until the agent listens (see sandboxAgent).
const (
	agentBinTarget  = "/run/swebox/agent"
	agentSockTarget = "/run/swebox/sock"
	agentSockName   = "agent.sock"
	// maxSocketPath is the size of sun_path in a Unix socket address on
	// Linux, the terminating NUL included.
	maxSocketPath  = 108
	agentExitName  = "agent.exit"
	agentStartName = "agent.started"
	// labelAgentDir names, on a sandbox, its socket directory under the
	// agent base directory, so that Prune removes the directory with it.
	labelAgentDir = "swebox.agentdir"
	// agentDirMinAge: Prune leaves a socket directory without a sandbox
	// alone this long, as the sandbox may still be in creation.
	agentDirMinAge = 10 * time.Minute
)

// agentSharedTimeout bounds the wait for a new sandbox's main process to
// show in the socket directory; when it never does, the engine does not
// see the client's files (a VM, a forwarded socket). agentReadyTimeout
// bounds the wait for the agent to listen once it has.
const (
	agentSharedTimeout = 5 * time.Second
	agentReadyTimeout  = 30 * time.Second
)

// agentKeepalive is the main process of a sandbox with an agent: it marks
// the socket directory (so that the host knows it is shared), starts the
// agent in the background and waits for it, writes the agent's exit status
// next to the socket if it ends (so that the host stops waiting for it),
// and then idles like keepalive. While the agent runs, it takes the place
// of keepalive's sleep.
var agentKeepalive = []string{"/bin/sh", "-c",
	`trap 'exit 0' TERM INT; : > "$1/` + agentStartName + `"; ` +
		`"$0" serve "$1/` + agentSockName + `" & wait $!; echo $? > "$1/` + agentExitName + `"; ` +
		`while :; do sleep 3600 & wait $!; done`,
	agentBinTarget, agentSockTarget}

// agentLeasedKeepalive is agentKeepalive for a leased sandbox (lease.go):
// the agent holds the lease while it runs and exits when its input ends; a
// read of the input takes the place of the idle sleep after it.
var agentLeasedKeepalive = []string{"/bin/sh", "-c",
	`exec 3<&0; trap 'exit 0' TERM INT; : > "$1/` + agentStartName + `"; ` +
		`"$0" serve "$1/` + agentSockName + `" ` + execagent.LeaseArg + ` <&3 & wait $!; echo $? > "$1/` + agentExitName + `"; ` +
		`{ while read -r _; do :; done; } <&3 & wait $!`,
	agentBinTarget, agentSockTarget}

// agentHost is what a client needs to give its sandboxes an agent: the
// binary installed on the host and the private directory that holds the
// sandboxes' socket directories.
type agentHost struct {
	bin  string
	base string
	// unreachable is set once a sandbox's agent never answered although it
	// did not fail: the engine does not share the client's filesystem, so
	// later sandboxes do without an agent at once.
	unreachable atomic.Bool
}

// newAgentHost installs the agent for the engine's architecture. The agent
// is reachable only when the engine runs on this machine, which the caller
// has checked (a local Unix socket).
func newAgentHost(arch string) (*agentHost, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the exec agent needs an engine on this Linux machine, not %s", runtime.GOOS)
	}
	base, err := agentBaseDir()
	if err != nil {
		return nil, err
	}
	binDir := filepath.Join(base, "bin")
	if cache, err := os.UserCacheDir(); err == nil {
		binDir = filepath.Join(cache, "swebox")
	}
	bin, err := agentbin.Install(binDir, arch)
	if err != nil {
		return nil, err
	}
	return &agentHost{bin: bin, base: base}, nil
}

// agentBaseDir returns the directory that holds the sandboxes' socket
// directories, made private to the current user: it is in a shared
// temporary directory, so an existing one must be a real directory of ours.
func agentBaseDir() (string, error) {
	base := agentBase()
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("make agent directory: %w", err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", fmt.Errorf("make agent directory: %w", err)
	}
	if !fi.IsDir() || !ownedByMe(fi) {
		return "", fmt.Errorf("agent directory %s is not a directory owned by uid %d", base, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(base, 0o700); err != nil {
			return "", fmt.Errorf("make agent directory private: %w", err)
		}
	}
	return base, nil
}

// sandboxAgent is one sandbox's agent, seen from the host.
//
// Its directory on the host, private to this user, holds two things: sock/,
// mounted into the sandbox at agentSockTarget, where the agent binds its
// socket, and, once the host has found it there, the socket itself, moved out
// of sock/ into the private directory. The host never connects through a
// directory the sandbox can write: a process of the sandbox's user could
// rename the socket aside and listen in its place (and relay and rewrite
// every later command and read its secrets), or put a symbolic link there
// that sends the next command, with its environment, to any socket of the
// host. A bound socket is reached through its inode, so the move keeps the
// agent listening, and nothing in the sandbox can reach it any more.
//
// Then sock/ is replaced by an empty directory the sandbox never sees: the
// sandbox's mount keeps the removed one, in which the kernel refuses to
// create anything, so the mount is not host storage the sandbox can fill
// outside its quotas. The path stays because the engine resolves every bind
// of a container for its archive endpoint (CopyIn, CopyOut).
type sandboxAgent struct {
	dir     string // private host directory
	sockDir string // dir/sock, mounted at agentSockTarget
	sock    string // dir/agent.sock: the socket, once moved out of sockDir
	// remote, when set, is an agent a seam backend started (StartAgent)
	// and reaches its own way; the sandbox then has no agent directory.
	remote seam.Agent
	// gone is set when the agent stopped answering; commands then go
	// through the engine.
	gone atomic.Bool
}

// sockSubdir is the name, in a sandbox's agent directory, of the directory
// mounted into it.
const sockSubdir = "sock"

// newSandboxAgent makes the directories of a sandbox that runs as uid:gid:
// the socket directory is that user's, who must own it to create the socket,
// and the directory that holds it the host user's alone.
func (h *agentHost) newSandboxAgent(session string, uid, gid int) (*sandboxAgent, error) {
	dir, err := os.MkdirTemp(h.base, agentDirPrefix(session)+"-")
	if err != nil {
		return nil, fmt.Errorf("make agent socket directory: %w", err)
	}
	a := &sandboxAgent{dir: dir, sockDir: filepath.Join(dir, sockSubdir), sock: filepath.Join(dir, agentSockName)}
	if len(a.sock) >= maxSocketPath {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("agent socket path %s is longer than a Unix socket address allows (%d bytes)", a.sock, maxSocketPath-1)
	}
	if err := os.Mkdir(a.sockDir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("make agent socket directory: %w", err)
	}
	// The next client removes the directory if this process dies first
	// (reapAgentDirs).
	if err := os.WriteFile(filepath.Join(dir, agentOwnerFile), []byte(ownerID()), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("make agent socket directory: %w", err)
	}
	if uid != os.Getuid() || gid != os.Getgid() {
		if err := os.Chown(a.sockDir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("give the agent socket directory to uid %d: %w", uid, err)
		}
	}
	return a, nil
}

// mounts are the agent's mounts in the sandbox.
func (a *sandboxAgent) mounts(bin string) []Mount {
	return []Mount{
		{Type: "bind", Source: bin, Target: agentBinTarget, ReadOnly: true},
		{Type: "bind", Source: a.sockDir, Target: agentSockTarget},
	}
}

// Why a sandbox's agent is not used.
var (
	// errAgentFailed: the agent ended in the sandbox (it cannot run there).
	errAgentFailed = errors.New("exec agent ended")
	// errAgentNotShared: the sandbox never wrote to its socket directory:
	// the engine does not see this machine's files.
	errAgentNotShared = errors.New("the engine does not share the exec agent's directory")
	// errAgentNotSocket: what appeared at the agent's socket path is not a
	// socket.
	errAgentNotSocket = errors.New("the exec agent's socket path holds no socket")
)

// waitReady waits until the agent's socket appears, moves it out of the
// sandbox's reach and waits until the agent accepts connections on it. It
// fails at once when the agent has ended or something other than a socket
// appeared, after agentSharedTimeout when the sandbox never marked its
// directory, and after agentReadyTimeout otherwise.
func (a *sandboxAgent) waitReady(ctx context.Context) error {
	root, err := os.OpenRoot(a.dir)
	if err != nil {
		return fmt.Errorf("open agent directory: %w", err)
	}
	defer root.Close()
	start := time.Now()
	delay := 500 * time.Microsecond
	shared, moved := false, false
	var last error
	for {
		if !moved {
			// rename moves a symbolic link, never its target; only a
			// socket is used.
			last = root.Rename(filepath.Join(sockSubdir, agentSockName), agentSockName)
			if last == nil {
				moved = true
				if fi, err := root.Lstat(agentSockName); err != nil || fi.Mode().Type() != os.ModeSocket {
					_ = root.Remove(agentSockName)
					return errAgentNotSocket
				}
			}
		}
		if moved {
			conn, err := net.DialTimeout("unix", a.sock, time.Second)
			if err == nil {
				return conn.Close()
			}
			last = err
		}
		// os.Root reads without following a link out of the directory.
		if b, err := root.ReadFile(filepath.Join(sockSubdir, agentExitName)); err == nil {
			return fmt.Errorf("%w with status %s", errAgentFailed, strings.TrimSpace(string(b)))
		}
		if !shared {
			_, err := root.Lstat(filepath.Join(sockSubdir, agentStartName))
			shared = err == nil
		}
		switch waited := time.Since(start); {
		case !shared && waited > agentSharedTimeout:
			return fmt.Errorf("%w: nothing appeared in %s for %v", errAgentNotShared, a.sockDir, agentSharedTimeout)
		case waited > agentReadyTimeout:
			return fmt.Errorf("exec agent did not listen for %v: %w", agentReadyTimeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("exec agent did not listen: %w (last: %v)", ctx.Err(), last)
		case <-time.After(delay):
		}
		delay = min(delay*2, 20*time.Millisecond)
	}
}

// seal replaces the socket directory with an empty one of the host user's
// (see sandboxAgent). RemoveAll never follows a link; the directory's parent
// is private, so its path cannot be swapped.
func (a *sandboxAgent) seal() error {
	if err := os.RemoveAll(a.sockDir); err != nil {
		return fmt.Errorf("seal agent socket directory: %w", err)
	}
	if err := os.Mkdir(a.sockDir, 0o500); err != nil {
		return fmt.Errorf("seal agent socket directory: %w", err)
	}
	return nil
}

// dial connects to the agent for one command.
func (a *sandboxAgent) dial(ctx context.Context) (net.Conn, error) {
	if a.remote != nil {
		dctx, cancel := context.WithTimeout(ctx, agentDialTimeout)
		defer cancel()
		return a.remote.Dial(dctx)
	}
	return net.DialTimeout("unix", a.sock, agentDialTimeout)
}

// remove deletes the agent's directory, or ends the host's connections to
// a remote agent.
func (a *sandboxAgent) remove() error {
	if a.remote != nil {
		return a.remote.Close()
	}
	if err := os.RemoveAll(a.dir); err != nil {
		return fmt.Errorf("remove agent socket directory: %w", err)
	}
	return nil
}

// agentStart maps a request to the agent's StartRequest.
func agentStart(req ExecRequest) execagent.StartRequest {
	env := make([]string, 0, len(req.Env))
	for k, v := range req.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return execagent.StartRequest{Argv: req.Cmd, Env: env, Dir: req.WorkingDir, TimeoutNS: int64(req.Timeout)}
}

// agentResult maps the agent's result to an ExecResult, reading the same as
// the engine's exec through Exec: a command that could not start exits 127
// (its program not found) or 126 with the reason on stderr, and Signal is
// derived from the exit code.
func agentResult(r execagent.Result, res *ExecResult, stderr func(string)) Usage {
	res.ExitCode = r.ExitCode
	if r.StartError != "" {
		stderr(r.StartError + "\n")
	}
	res.TimedOut = r.TimedOut
	if res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = res.ExitCode - 128
	}
	res.OOMKilled = r.OOMKilled && res.Signal == 9 && !res.TimedOut
	return Usage{
		MaxRSS:    r.MaxRSSKB << 10,
		UserCPU:   time.Duration(r.UserNS),
		SystemCPU: time.Duration(r.SysNS),
	}
}

// Usage is what a command's processes used, as the kernel accounts it to
// the processes that were waited for. The engine's exec cannot tell it, so
// it is zero for commands that did not go through the exec agent.
type Usage struct {
	// MaxRSS is the peak resident memory of the largest single process, in
	// bytes.
	MaxRSS int64
	// UserCPU and SystemCPU are the CPU time of all processes together.
	UserCPU, SystemCPU time.Duration
}

// agentDialTimeout bounds connecting to an agent; it answers at once or is
// gone.
const agentDialTimeout = time.Second

// agentState is a client's exec agent setup, made on first use.
type agentState struct {
	off  bool // WithExecAgent(false)
	once sync.Once
	host *agentHost
	err  error // why the client's sandboxes have no agent
}

// agentFor prepares the agent of a sandbox about to be created from a
// defaulted spec: it returns the agent (nil when the sandbox will have
// none), and the spec and main command to create it with.
func (c *Client) agentFor(spec Spec) (*sandboxAgent, Spec, []string) {
	st := &c.agent
	if st.off || !info(c.b).AgentSocket || (spec.Runtime != "" && spec.Runtime != "runc") {
		return nil, spec, keepalive
	}
	st.once.Do(func() { st.host, st.err = newAgentHost(runtime.GOARCH) })
	if st.err != nil {
		c.log.Debug("no exec agent", "cause", st.err)
		return nil, spec, keepalive
	}
	if st.host.unreachable.Load() {
		return nil, spec, keepalive
	}
	uid, gid, _ := parseUser(spec.User) // validated
	if info(c.b).SandboxUserIsCaller {
		uid, gid = os.Getuid(), os.Getgid()
	}
	a, err := st.host.newSandboxAgent(c.session, uid, gid)
	if err != nil {
		c.log.Debug("no exec agent", "cause", err)
		return nil, spec, keepalive
	}
	spec.Mounts = append(append([]Mount(nil), spec.Mounts...), a.mounts(st.host.bin)...)
	// The agent's threads and a command's shim count against the process
	// limit; the allowance leaves the command the processes it would have
	// through the engine's exec.
	spec.Limits.PidsLimit += execagent.PidsAllowance
	spec.Labels = mergeLabels(spec.Labels, map[string]string{labelAgentDir: filepath.Base(a.dir)})
	return a, spec, agentKeepalive
}

// startAgent waits for a started sandbox's agent; a sandbox whose agent
// does not answer runs its commands through the engine. Either way the
// socket directory is sealed before the sandbox runs a command.
func (s *Sandbox) startAgent(ctx context.Context, a *sandboxAgent) {
	if a == nil {
		return
	}
	err := a.waitReady(ctx)
	if serr := a.seal(); serr != nil {
		// Not expected: only the sandbox's main process and the agent
		// have run in it. Its commands go through the engine, and the
		// directory stays until the sandbox goes.
		s.c.log.Warn("exec agent not used", "id", shortID(s.id), "cause", serr)
		return
	}
	if err == nil {
		s.agent = a
		return
	}
	s.c.log.Debug("exec agent not reachable; commands go through the engine", "id", shortID(s.id), "cause", err)
	if errors.Is(err, errAgentNotShared) && s.isRunning(ctx) {
		// Later sandboxes of this client do without an agent at once.
		s.c.agent.host.unreachable.Store(true)
	}
	// The agent's directory stays until the sandbox is removed (agentDir).
}

// startRemoteAgent starts the agent of a started sandbox on a backend that
// runs it itself (seam.AgentStarter, e.g. a Kubernetes pod); a sandbox whose
// agent does not start runs its commands through the backend's exec, and
// the log says why.
func (s *Sandbox) startRemoteAgent(ctx context.Context) {
	st, ok := s.c.b.(seam.AgentStarter)
	if !ok || s.c.agent.off {
		return
	}
	remote, err := st.StartAgent(ctx, s.id)
	if err != nil {
		s.c.log.Info("exec agent not started; commands go through the engine", "id", shortID(s.id), "cause", err)
		return
	}
	s.agent = &sandboxAgent{remote: remote}
	s.agentDir = s.agent
}

// sameUser reports whether two uid:gid strings name the same ids.
func sameUser(a, b string) bool {
	au, ag, err1 := parseUser(a)
	bu, bg, err2 := parseUser(b)
	return err1 == nil && err2 == nil && au == bu && ag == bg
}

// execAgent runs req through the sandbox's agent. ok is false when the
// sandbox has no usable agent (none, it is gone, or req runs as another
// user than the agent), and the caller then uses the engine's exec.
func (s *Sandbox) execAgent(ctx context.Context, req ExecRequest, user string) (res ExecResult, err error, ok bool) {
	a := s.agent
	if a == nil || a.gone.Load() || !sameUser(user, s.spec.User) {
		return ExecResult{}, nil, false
	}
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("exec %q: %w", req.Cmd[0], err), true
	}
	conn, err := a.dial(ctx)
	if err != nil {
		if running, why := s.stopped(context.WithoutCancel(ctx)); !running {
			return ExecResult{}, fmt.Errorf("%w (%s): exec %q: %w", ErrNotRunning, why, req.Cmd[0], err), true
		}
		// Something in the sandbox ended its agent; the engine still works.
		s.c.log.Debug("exec agent gone; commands go through the engine", "id", shortID(s.id), "cause", err)
		a.gone.Store(true)
		return ExecResult{}, nil, false
	}
	outBuf, errBuf := newCapBuffer(req.OutputLimit), newCapBuffer(req.OutputLimit)
	stdout, stderr := streamWriter(outBuf, req.Stdout), streamWriter(errBuf, req.Stderr)
	start := time.Now()
	r, err := execagent.Run(ctx, conn, execagent.Call{
		Req: agentStart(req), Stdin: req.Stdin, Stdout: stdout, Stderr: stderr,
	})
	res.Duration = time.Since(start)
	if a.remote != nil && ctx.Err() == nil && (err != nil || r.Error == "" && !r.TimedOut && r.ExitCode >= 128) {
		// The backend tells a lost sandbox (a deleted pod, a node gone)
		// from a broken connection or a command a signal ended.
		if lerr := a.remote.Explain(ctx, conn, r.ExitCode, err); lerr != nil {
			if errors.Is(lerr, seam.ErrAgentGone) && req.Stdin == nil && outBuf.Output().Total+errBuf.Output().Total == 0 {
				// Gone before it took the command: the engine runs it.
				s.c.log.Debug("exec agent gone; commands go through the engine", "id", shortID(s.id), "cause", err)
				a.gone.Store(true)
				return ExecResult{}, nil, false
			}
			return ExecResult{}, fmt.Errorf("exec %q: %w", req.Cmd[0], lerr), true
		}
	}
	if err != nil {
		res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()
		icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if s.stopsSoon(icx) {
			return ExecResult{}, fmt.Errorf("%w: exec %q: the container stopped while it ran: %w", ErrNotRunning, req.Cmd[0], err), true
		}
		// The agent died mid-command: nothing can find the command's
		// processes any more, so the container goes.
		unusable, kerr := s.markUnusable(fmt.Errorf("the exec agent failed while %q ran: %w", req.Cmd[0], err))
		return ExecResult{}, errors.Join(unusable, kerr), true
	}
	if r.Error != "" {
		// The agent could not start the command, or lost it: there is no
		// result to report.
		err := fmt.Errorf("exec %q through the exec agent: %s", req.Cmd[0], r.Error)
		if r.KillError != "" {
			unusable, kerr := s.markUnusable(err)
			return ExecResult{}, errors.Join(unusable, kerr), true
		}
		return ExecResult{}, err, true
	}
	res.Usage = agentResult(r, &res, func(msg string) { _, _ = io.WriteString(stderr, msg) })
	if info(s.c.b).SharedMemoryCgroup {
		res.OOMKilled = false // the agent's count is of a cgroup shared with other processes
	}
	res.Stdout, res.Stderr = outBuf.Output(), errBuf.Output()
	if r.TimedOut && ctx.Err() != nil {
		err = fmt.Errorf("exec %q: %w", req.Cmd[0], ctx.Err())
	}
	if r.KillError != "" {
		// As on the engine's path, the result stands (a timed-out command
		// is timed out however long its kill takes): the container is
		// killed, so no process of the command survives, and the sandbox
		// refuses further commands (ErrUnusable). Only a failed kill of the
		// container is this command's error.
		_, kerr := s.markUnusable(fmt.Errorf("the exec agent could not kill %q: %s", req.Cmd[0], r.KillError))
		err = errors.Join(err, kerr)
	}
	return res, err, true
}

// agentLossSettle is how long a lost agent connection waits for the engine
// to report the container stopped: the agent dies with the container's
// processes, a moment before the engine notices that the container ended.
const agentLossSettle = 3 * time.Second

// stopsSoon reports whether the container stops within agentLossSettle.
func (s *Sandbox) stopsSoon(ctx context.Context) bool {
	deadline := time.Now().Add(agentLossSettle)
	for {
		if !s.isRunning(ctx) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// markUnusable kills the sandbox's container because processes of a
// command may be left that cannot be found, and marks the sandbox unusable.
// It returns the sandbox's new state, and the kill's error.
func (s *Sandbox) markUnusable(cause error) (unusable, killErr error) {
	s.c.log.Warn("killing container: processes of a command cannot be found", "id", shortID(s.id), "cause", cause)
	s.mu.Lock()
	s.unusable = fmt.Errorf("%w: %w; the container was killed", ErrUnusable, cause)
	unusable = s.unusable
	s.mu.Unlock()
	kctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	return unusable, s.Kill(kctx, "KILL")
}

// agentDirs lists agentBase, which holds no directory when it does not
// exist.
func agentDirs() (base string, entries []os.DirEntry, err error) {
	base = agentBase()
	entries, err = os.ReadDir(base)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return base, nil, fmt.Errorf("list agent directories: %w", err)
	}
	return base, entries, nil
}

// agentBase is where the socket directories are; agentBaseDir makes it.
func agentBase() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("swebox-agent-%d", os.Getuid()))
}

// removeAgentDir removes the socket directory a removed sandbox's label
// names; an empty or malformed name is ignored.
func removeAgentDir(name string) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." || name == "bin" {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(agentBase(), name)); err != nil {
		return fmt.Errorf("remove agent directory: %w", err)
	}
	return nil
}

// pruneAgentDirs removes the socket directories of a session (of every
// session when all is set) that are older than agentDirMinAge: those of
// sandboxes that were never created. Those of sandboxes go with them.
// agentDirPrefix begins the names of a session's socket directories: a
// short readable prefix of the session, to keep the socket's path within a
// Unix socket address, and a hash of all of it, so that a session's prune
// finds its own directories and no other session's.
func agentDirPrefix(session string) string {
	sum := sha256.Sum256([]byte(session))
	readable := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return r
		}
		return '_'
	}, session[:min(len(session), 8)])
	return readable + "." + hex.EncodeToString(sum[:4])
}

func pruneAgentDirs(session string, all bool) error {
	base, entries, err := agentDirs()
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndexByte(name, '-')
		if !e.IsDir() || i < 0 || (!all && name[:i] != agentDirPrefix(session)) {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < agentDirMinAge {
			continue
		}
		if err := os.RemoveAll(filepath.Join(base, name)); err != nil {
			errs = append(errs, fmt.Errorf("remove agent directory: %w", err))
		}
	}
	return errors.Join(errs...)
}

// UsesExecAgent reports whether the sandbox's commands go through its exec
// agent (see [WithExecAgent]) rather than the engine's exec.
func (s *Sandbox) UsesExecAgent() bool { return s.agent != nil && !s.agent.gone.Load() }
