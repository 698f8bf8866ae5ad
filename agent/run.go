package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/traceback"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/sandbox"
)

// RunPython runs code with python3 in a fresh sandbox of the default image
// and removes it. It builds a Manager with a default client for the call;
// programs that run more than once should keep a Manager.
func RunPython(ctx context.Context, code string, opts RunOptions) (Result, error) {
	return withManager(func(m *Manager) (Result, error) { return m.RunPython(ctx, code, opts) })
}

// RunShell runs script with /bin/sh in a fresh sandbox of the default image
// and removes it. It builds a Manager with a default client for the call.
func RunShell(ctx context.Context, script string, opts RunOptions) (Result, error) {
	return withManager(func(m *Manager) (Result, error) { return m.RunShell(ctx, script, opts) })
}

func withManager(f func(*Manager) (Result, error)) (res Result, err error) {
	m, err := New(nil)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, m.Close()) }()
	return f(m)
}

// RunPython runs code with python3 in a fresh sandbox, with a fresh
// workspace, and removes both. The code is passed as a file
// (/workspace/.swebox/run-<id>/main.py), never through a shell, and runs
// with /workspace as its working directory and on its import path.
func (m *Manager) RunPython(ctx context.Context, code string, opts RunOptions) (Result, error) {
	so, eo := opts.split()
	return m.oneShot(ctx, so, eo, pythonJob(code))
}

// RunShell runs script in a fresh sandbox with a fresh workspace, and
// removes both. The script is passed as a file, run by opts.Shell.
func (m *Manager) RunShell(ctx context.Context, script string, opts RunOptions) (Result, error) {
	so, eo := opts.split()
	return m.oneShot(ctx, so, eo, shellJob(script, eo.Shell))
}

// job is one command: what it writes into its run directory, and what is
// read back from there after it ran.
type job struct {
	// write puts the command's files into its run directory and returns
	// its argv and extra environment.
	write func(d *runDir) (argv []string, env map[string]string, err error)
	// timeout replaces DefaultTimeout when ExecOptions sets none.
	timeout time.Duration
	// workdir replaces /workspace as the working directory.
	workdir string
	// after, when set, reads the run directory before it is removed.
	after func(d *runDir, mk masker, res *Result)
}

func pythonJob(code string) job {
	return job{write: func(d *runDir) ([]string, map[string]string, error) {
		if err := d.write("main.py", []byte(code)); err != nil {
			return nil, nil, err
		}
		return []string{"python3", d.path("main.py")}, map[string]string{"PYTHONUNBUFFERED": "1"}, nil
	}}
}

func shellJob(script, shell string) job {
	if shell == "" {
		shell = "/bin/sh"
	}
	return job{write: func(d *runDir) ([]string, map[string]string, error) {
		if err := d.write("script.sh", []byte(script)); err != nil {
			return nil, nil, err
		}
		return []string{shell, d.path("script.sh")}, nil, nil
	}}
}

// prepare writes the job's files and returns its argv (with the caller's
// Args) and its request.
func (j job) prepare(d *runDir, eo ExecOptions, sessionEnv map[string]string) ([]string, sandbox.ExecRequest, error) {
	argv, jobEnv, err := j.write(d)
	if err != nil {
		return nil, sandbox.ExecRequest{}, err
	}
	argv = append(argv, eo.Args...)
	timeout := eo.Timeout
	if timeout <= 0 {
		timeout = j.timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	req := sandbox.ExecRequest{Env: execEnv(sessionEnv, eo.Env, jobEnv), Timeout: timeout, OutputLimit: eo.OutputLimit, WorkingDir: j.workdir,
		Stdout: eo.Stdout, Stderr: eo.Stderr}
	if eo.Stdin != nil {
		req.Stdin = bytes.NewReader(eo.Stdin)
	}
	return argv, req, nil
}

// newRunID names one command's run directory and secrets.
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// runDir is one command's directory in a workspace (.swebox/run-<id>).
// The host reaches it through an os.Root on the workspace, so a symlink the
// sandbox planted (.swebox pointing at a host directory, say) cannot send the
// host's reads and writes outside the workspace.
type runDir struct {
	root *os.Root
	rel  string // relative to the workspace
}

// open opens the run directory rid in the workspace ws and prepares j
// there (prepare); the caller removes the directory.
func (j job) open(ws, rid string, eo ExecOptions, sessionEnv map[string]string) (*runDir, []string, sandbox.ExecRequest, error) {
	dir, err := openRunDir(ws, rid)
	if err != nil {
		return nil, nil, sandbox.ExecRequest{}, err
	}
	argv, req, err := j.prepare(dir, eo, sessionEnv)
	if err != nil {
		dir.remove()
		return nil, nil, sandbox.ExecRequest{}, err
	}
	return dir, argv, req, nil
}

func openRunDir(ws, rid string) (*runDir, error) {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	d := &runDir{root: root, rel: internalDir + "/run-" + rid}
	// The program may have replaced .swebox (with a symlink, say); the
	// library's directory is put back.
	if fi, err := root.Lstat(internalDir); err == nil && !fi.IsDir() {
		_ = root.Remove(internalDir)
	}
	if err := mkdirOwned(root, d.rel); err != nil {
		root.Close()
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	return d, nil
}

// path is name's path in the sandbox.
func (d *runDir) path(name string) string { return path.Join(sandbox.WorkspaceDir, d.rel, name) }

func (d *runDir) write(name string, data []byte) error {
	if err := writeRootFile(d.root, path.Join(d.rel, name), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// maxRunFile bounds what the host reads of a file a command wrote in its
// run directory (stats, a test case's report: a few KiB each). The command
// may have replaced the file with a link, a FIFO or a huge sparse file;
// such a file is not read.
const maxRunFile = 1 << 20

func (d *runDir) read(name string) ([]byte, error) {
	return hostfs.ReadFile(d.root, path.Join(d.rel, name), maxRunFile)
}

// remove deletes the directory and releases the root.
func (d *runDir) remove() error {
	err := d.root.RemoveAll(d.rel)
	return errors.Join(err, d.root.Close())
}

// wrap puts argv behind the wrapper script, which exports the secrets in
// secretDirs, activates the virtual environment and starts the launcher.
func wrap(statsPath string, secretDirs []string, argv []string) []string {
	cmd := []string{"/bin/sh", libTarget + "/run.sh", statsPath}
	cmd = append(cmd, secretDirs...)
	cmd = append(append(cmd, "--"), argv...)
	return cmd
}

// execEnv is a command's environment: the job's, then PYTHONPATH with the
// workspace after any the caller set, then the caller's.
func execEnv(sessionEnv, callEnv, jobEnv map[string]string) map[string]string {
	env := merge(jobEnv, callEnv)
	pp := sandbox.WorkspaceDir
	if v := callEnv["PYTHONPATH"]; v != "" {
		pp = v + ":" + pp
	} else if v := sessionEnv["PYTHONPATH"]; v != "" {
		pp = v + ":" + pp
	}
	env["PYTHONPATH"] = pp
	return env
}

// sandboxSpec is the spec of a session's or one-shot's container.
func (m *Manager) sandboxSpec(o SessionOptions, ws string, kind, name string) sandbox.Spec {
	return sandbox.Spec{
		Image:     m.imageOr(o.Image),
		Workspace: ws,
		Env:       merge(o.Env, nil),
		Limits:    o.Limits,
		Runtime:   o.Runtime,
		Labels:    m.labels(kind, name),
		Policy:    sandbox.AllowAll(),
		Mounts:    []sandbox.Mount{{Source: m.libDir, Target: libTarget, ReadOnly: true}},
	}
}

// withProxy starts an egress proxy for a and mounts its socket into spec;
// it returns nil when a grants nothing.
func (m *Manager) withProxy(spec *sandbox.Spec, a egress.Allowlist) (*egress.Proxy, error) {
	if !a.Enabled() {
		return nil, nil
	}
	px, err := egress.Start(a, egress.WithLogger(m.log))
	if err != nil {
		return nil, err
	}
	spec.Mounts = append(spec.Mounts, sandbox.Mount{Source: px.Dir(), Target: egressTarget, ReadOnly: true})
	spec.Env[egressEnv] = path.Join(egressTarget, egress.SocketName)
	return px, nil
}

// oneShot runs one job in a fresh workspace and container.
func (m *Manager) oneShot(ctx context.Context, so SessionOptions, eo ExecOptions, j job) (res Result, err error) {
	if err := errors.Join(so.validate(), eo.validate()); err != nil {
		return Result{}, err
	}
	if err := m.checkOpen(); err != nil {
		return Result{}, err
	}
	secrets, err := m.resolveSecrets(ctx, eo.Secrets)
	if err != nil {
		return Result{}, err
	}
	if m.pooled() && !so.Egress.Enabled() {
		return m.oneShotPooled(ctx, so, eo, j, secrets)
	}
	rid := newRunID()
	ws := filepath.Join(m.stateDir, "runs", rid)
	if err := newWorkspace(ws); err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, fsutil.RemoveAll(ws)) }()
	if err := m.writeFiles(ctx, ws, append(append([]File{}, so.Files...), eo.Files...)); err != nil {
		return Result{}, err
	}
	spec := m.sandboxSpec(so, ws, "run", "")
	inst, err := m.mountRequirements(ctx, &spec, so)
	if err != nil {
		return Result{}, err
	}
	if inst != nil && !inst.OK() {
		return installFailed(inst, so), nil
	}
	px, err := m.withProxy(&spec, so.Egress)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, px.Close()) }()

	dir, argv, req, err := j.open(ws, rid, eo, so.Env)
	if err != nil {
		return Result{}, err
	}
	defer dir.remove()
	var raw sandbox.ExecResult
	if len(secrets) == 0 {
		// No secrets to copy in first: the command is the container's
		// main process, which saves the engine round trips of an exec.
		req.Cmd = wrap(dir.path("stats.json"), nil, argv)
		raw, err = m.c.Run(ctx, spec, req)
	} else {
		raw, err = m.runWithSecrets(ctx, spec, req, rid, secrets, dir.path("stats.json"), argv)
	}
	if err != nil {
		return Result{}, err
	}
	out := m.outcome(raw, dir, ws, secrets, so, eo, j, req.Timeout)
	out.Install = inst
	out.Egress, out.EgressDropped = px.Events()
	return out, nil
}

// outcome is a one-shot's Result: the command's, the job's own reading of
// its run directory, and the artifacts.
func (m *Manager) outcome(raw sandbox.ExecResult, dir *runDir, ws string, secrets map[string]string, so SessionOptions, eo ExecOptions, j job, timeout time.Duration) Result {
	mk := newMasker(secrets)
	out := m.finish(raw, dir, mk, so.Limits, timeout)
	if j.after != nil {
		j.after(dir, mk, &out)
	}
	set := collectArtifacts(ws, nil, eo.Artifacts)
	out.Artifacts, out.ArtifactsDropped, out.ArtifactsSkipped = set.files, set.dropped, set.skipped
	return out
}

// pooled reports whether the manager's client keeps a warm pool.
func (m *Manager) pooled() bool { return m.c.PoolSize() > 0 }

// pooledSpec is the spec of a pooled sandbox: that of a run or session
// without its workspace, which the pool makes for each sandbox, and
// without its environment, which goes with each command instead, so that
// runs that differ only in Env share the pool's sandboxes.
func (m *Manager) pooledSpec(o SessionOptions, kind string) sandbox.Spec {
	spec := m.sandboxSpec(o, "", kind, "")
	spec.Env = nil
	return spec
}

// createPooled takes a sandbox from the pool, or starts one, with a
// workspace of its own in the runs directory, laid out as newWorkspace
// lays one out.
func (m *Manager) createPooled(ctx context.Context, spec sandbox.Spec) (*sandbox.Sandbox, error) {
	return m.c.CreateWithWorkspace(ctx, spec, sandbox.NewWorkspace{Parent: filepath.Join(m.stateDir, "runs"), Prepare: newWorkspace})
}

// discard starts removing a pooled sandbox, which kills what runs in it,
// and returns release, after whose call its workspace is removed too; both
// in the background, and Close waits for them.
func (m *Manager) discard(sb *sandbox.Sandbox) (release func()) {
	released := make(chan struct{})
	m.removing.Add(1)
	go func() {
		defer m.removing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
		defer cancel()
		err := sb.Remove(ctx)
		<-released
		if err == nil {
			err = fsutil.RemoveAll(sb.Spec().Workspace)
		}
		if err != nil {
			m.log.Warn("remove pooled sandbox", "id", sb.ID(), "err", err)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(released) }) }
}

// oneShotPooled runs one job as a command in a sandbox from the pool. A
// sandbox that stopped before the command started (it was ready too long,
// say) is replaced once.
func (m *Manager) oneShotPooled(ctx context.Context, so SessionOptions, eo ExecOptions, j job, secrets map[string]string) (Result, error) {
	spec := m.pooledSpec(so, "run")
	inst, err := m.mountRequirements(ctx, &spec, so)
	if err != nil {
		return Result{}, err
	}
	if inst != nil && !inst.OK() {
		return installFailed(inst, so), nil
	}
	for attempt := 0; ; attempt++ {
		out, err := m.runPooled(ctx, spec, so, eo, j, secrets)
		if errors.Is(err, sandbox.ErrNotRunning) && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return Result{}, err
		}
		out.Install = inst
		return out, nil
	}
}

func (m *Manager) runPooled(ctx context.Context, spec sandbox.Spec, so SessionOptions, eo ExecOptions, j job, secrets map[string]string) (Result, error) {
	sb, err := m.createPooled(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	var release func()
	defer func() {
		if release == nil {
			release = m.discard(sb)
		}
		release()
	}()
	ws := sb.Spec().Workspace
	if err := m.writeFiles(ctx, ws, append(append([]File{}, so.Files...), eo.Files...)); err != nil {
		return Result{}, err
	}
	rid := newRunID()
	dir, argv, req, err := j.open(ws, rid, eo, so.Env)
	if err != nil {
		return Result{}, err
	}
	defer dir.remove()
	req.Env = merge(so.Env, req.Env)
	var dirs []string
	if len(secrets) > 0 {
		name := "secrets-" + rid
		if err := copySecrets(ctx, sb, name, secrets); err != nil {
			return Result{}, err
		}
		dirs = append(dirs, secretsDir(name))
	}
	req.Cmd = wrap(dir.path("stats.json"), dirs, argv)
	raw, err := sb.Exec(ctx, req)
	if err != nil {
		return Result{}, err
	}
	if raw.Signal == 9 && !raw.OOMKilled && !raw.TimedOut {
		// The OOM killer may have ended the program, a child of the
		// launcher, which the exec agent does not report; the sandbox is
		// fresh, so any OOM kill in it is this run's, as a run of its own
		// would report.
		if n, err := sb.OOMKills(ctx); err == nil && n > 0 {
			raw.OOMKilled = true
		}
	}
	// The sandbox goes at once, and with it what the program left running,
	// while the workspace is read.
	release = m.discard(sb)
	return m.outcome(raw, dir, ws, secrets, so, eo, j, req.Timeout), nil
}

// runWithSecrets creates the container, copies the secrets onto its tmpfs
// and runs the command with exec.
func (m *Manager) runWithSecrets(ctx context.Context, spec sandbox.Spec, req sandbox.ExecRequest, rid string, secrets map[string]string, stats string, argv []string) (res sandbox.ExecResult, err error) {
	sb, err := m.c.Create(ctx, spec)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, sb.Remove(ctx)) }()
	dir := "secrets-" + rid
	if err := copySecrets(ctx, sb, dir, secrets); err != nil {
		return res, err
	}
	req.Cmd = wrap(stats, []string{secretsDir(dir)}, argv)
	return sb.Exec(ctx, req)
}

// mountRequirements builds (or reuses) the environment of so.Requirements
// and mounts it read-only into spec. It returns nil when there are none, and
// the failed install without mounting anything when it failed.
func (m *Manager) mountRequirements(ctx context.Context, spec *sandbox.Spec, so SessionOptions) (*Install, error) {
	if so.Requirements.Empty() {
		return nil, nil
	}
	env, in, err := m.ensureEnv(ctx, spec.Image, so.Requirements)
	if err != nil || !in.OK() {
		return in, err
	}
	spec.Mounts = append(spec.Mounts, sandbox.Mount{Source: env, Target: venvTarget, ReadOnly: true})
	return in, nil
}

func installFailed(in *Install, so SessionOptions) Result {
	return Result{Kind: KindInstall, ExitCode: in.ExitCode, Install: in, MemoryLimit: memoryLimit(so.Limits)}
}

func memoryLimit(l sandbox.Limits) int64 {
	if l.Memory > 0 {
		return l.Memory
	}
	return sandbox.DefaultMemory
}

// runStats is what the launcher writes after the program ends.
type runStats struct {
	MaxRSSKiB int64   `json:"maxrss_kb"`
	UTime     float64 `json:"utime"`
	STime     float64 `json:"stime"`
}

// finish turns a command's raw result into a Result: secrets masked,
// traceback parsed, kind decided, usage read from the run directory dir.
func (m *Manager) finish(raw sandbox.ExecResult, dir *runDir, mk masker, limits sandbox.Limits, timeout time.Duration) Result {
	res := Result{
		ExitCode: raw.ExitCode, Signal: raw.Signal,
		Stdout: mk.output(raw.Stdout), Stderr: mk.output(raw.Stderr),
		Duration: raw.Duration, Timeout: timeout, MemoryLimit: memoryLimit(limits),
	}
	res.Error = traceback.Parse(res.Stderr.String())
	res.Kind = kindOf(raw, res.Error)
	if b, err := dir.read("stats.json"); err == nil {
		var st runStats
		if json.Unmarshal(b, &st) == nil {
			res.PeakMemory = st.MaxRSSKiB << 10
			res.CPUTime = time.Duration((st.UTime + st.STime) * float64(time.Second))
		}
	}
	return res
}

func (m *Manager) checkOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("agent: manager %w", ErrClosed)
	}
	return nil
}
