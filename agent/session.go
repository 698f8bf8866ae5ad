package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/internal/atomicfile"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
)

// Session is a named sandbox whose workspace and container persist across
// calls: files written by one call are there for the next, and so is the
// virtual environment. It ends when closed, removed, or idle past its
// IdleTimeout; a persistent session then only loses its container, which
// the next call recreates. Its methods are safe for concurrent use.
type Session struct {
	m    *Manager
	name string
	opts SessionOptions
	dir  string // the session's directory in the state directory
	ws   string // its workspace, mounted at /workspace

	// pooled: the session's first sandbox comes from the client's pool,
	// with a workspace of its own that becomes the session's.
	pooled bool

	mu       sync.Mutex
	sb       *sandbox.Sandbox // nil while suspended
	px       *egress.Proxy
	secrets  map[string]string // resolved session secrets
	reqs     Requirements      // installed so far
	created  time.Time
	lastUsed time.Time
	active   int
	runs     int
	closed   bool
}

// SessionInfo describes a session.
type SessionInfo struct {
	Name       string
	Persistent bool
	// Workspace is the host directory mounted at /workspace.
	Workspace string
	// Container is the container's id; empty while the session is
	// suspended (idle, or not yet resumed by this manager).
	Container string
	Created   time.Time
	LastUsed  time.Time
	// Active counts the calls running now; Runs those made so far.
	Active, Runs int
	// Requirements are the packages installed in the session's environment.
	Requirements []string
}

var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// sessionMeta is a persistent session's record on disk.
type sessionMeta struct {
	Name         string         `json:"name"`
	Options      SessionOptions `json:"options"`
	Requirements Requirements   `json:"requirements"`
	Created      time.Time      `json:"created"`
}

const sessionMetaFile = "session.json"

// Create starts a session named name: a workspace, its requirements, its
// container. The name (letters, digits, "_", ".", "-"; at most 63) must not
// be in use. A failed requirements install is an *InstallError.
func (m *Manager) Create(ctx context.Context, name string, opts SessionOptions) (*Session, error) {
	if !sessionName.MatchString(name) {
		return nil, optErr("name", "%q is not a session name (letters, digits, _ . -; at most 63)", name)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Session{m: m, name: name, opts: opts, dir: filepath.Join(m.stateDir, "sessions", name)}
	s.pooled = m.pooled() && !opts.Persistent && !opts.Egress.Enabled()
	if !s.pooled {
		s.ws = filepath.Join(s.dir, "workspace")
	}
	s.created = m.now()
	s.lastUsed = s.created
	s.mu.Lock()
	defer s.mu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("agent: manager %w", ErrClosed)
	}
	if _, ok := m.sessions[name]; ok || fileExists(filepath.Join(s.dir, sessionMetaFile)) {
		m.mu.Unlock()
		return nil, fmt.Errorf("create session %q: %w", name, ErrSessionExists)
	}
	m.sessions[name] = s
	m.mu.Unlock()
	if err := s.init(ctx); err != nil {
		m.mu.Lock()
		delete(m.sessions, name)
		m.mu.Unlock()
		s.closed = true
		return nil, errors.Join(err, s.suspendLocked(ctx), s.removeDirs())
	}
	m.log.Debug("session created", "name", name, "persistent", opts.Persistent)
	return s, nil
}

func (s *Session) init(ctx context.Context) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("create session directory: %w", err)
	}
	if s.pooled {
		// The sandbox comes first: its workspace is where the files and
		// the environment go.
		if err := s.startLocked(ctx); err != nil {
			return err
		}
	} else if err := newWorkspace(s.ws); err != nil {
		return err
	}
	if err := s.m.writeFiles(ctx, s.ws, s.opts.Files); err != nil {
		return err
	}
	if !s.opts.Requirements.Empty() {
		if _, err := s.installLocked(ctx, s.opts.Requirements); err != nil {
			return err
		}
	}
	if err := s.saveLocked(); err != nil {
		return err
	}
	if s.sb != nil {
		return nil
	}
	return s.startLocked(ctx)
}

// Get returns the session named name: a live one, or a persistent one this
// state directory holds (which resumes on its first call).
func (m *Manager) Get(ctx context.Context, name string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("agent: manager %w", ErrClosed)
	}
	if s, ok := m.sessions[name]; ok {
		return s, nil
	}
	if !sessionName.MatchString(name) {
		return nil, fmt.Errorf("get session %q: %w", name, ErrSessionNotFound)
	}
	s, err := m.loadSession(name)
	if err != nil {
		return nil, err
	}
	m.sessions[name] = s
	return s, nil
}

// Open returns the session named name, creating it with opts when there is
// none. The opts of an existing session are not changed.
func (m *Manager) Open(ctx context.Context, name string, opts SessionOptions) (*Session, error) {
	s, err := m.Get(ctx, name)
	if errors.Is(err, ErrSessionNotFound) {
		s, err = m.Create(ctx, name, opts)
		if errors.Is(err, ErrSessionExists) {
			return m.Get(ctx, name)
		}
	}
	return s, err
}

// loadSession reads a persistent session from disk. m.mu is held.
func (m *Manager) loadSession(name string) (*Session, error) {
	dir := filepath.Join(m.stateDir, "sessions", name)
	b, err := os.ReadFile(filepath.Join(dir, sessionMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("get session %q: %w", name, ErrSessionNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %q: %w", name, err)
	}
	var meta sessionMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("read session %q: %w", name, err)
	}
	s := &Session{m: m, name: name, opts: meta.Options, dir: dir, ws: filepath.Join(dir, "workspace"), reqs: meta.Requirements, created: meta.Created}
	s.lastUsed = m.now()
	return s, nil
}

// List describes the live sessions and the persistent ones on disk, by name.
func (m *Manager) List(ctx context.Context) ([]SessionInfo, error) {
	m.mu.Lock()
	live := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		live = append(live, s)
	}
	m.mu.Unlock()
	seen := map[string]bool{}
	var out []SessionInfo
	for _, s := range live {
		out = append(out, s.Info())
		seen[s.name] = true
	}
	entries, err := os.ReadDir(filepath.Join(m.stateDir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for _, e := range entries {
		if seen[e.Name()] || !e.IsDir() {
			continue
		}
		m.mu.Lock()
		s, err := m.loadSession(e.Name())
		m.mu.Unlock()
		if err != nil {
			continue
		}
		out = append(out, s.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove ends the session named name and deletes its workspace, persistent
// or not.
func (m *Manager) Remove(ctx context.Context, name string) error {
	s, err := m.Get(ctx, name)
	if err != nil {
		return err
	}
	return s.Remove(ctx)
}

// Reap ends the sessions idle past their timeout, as the background reaper
// does, and returns how many it ended (persistent ones are suspended).
func (m *Manager) Reap(ctx context.Context) (int, error) {
	m.mu.Lock()
	sessions := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		sessions = append(sessions, s)
	}
	m.mu.Unlock()
	n := 0
	var errs []error
	now := m.now()
	for _, s := range sessions {
		ended, err := s.reap(ctx, now)
		if ended {
			n++
		}
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

func (m *Manager) reaper() {
	defer close(m.stopped)
	t := time.NewTicker(m.reapEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			if _, err := m.Reap(context.Background()); err != nil {
				m.log.Warn("reap idle sessions", "err", err)
			}
		}
	}
}

func (s *Session) reap(ctx context.Context, now time.Time) (bool, error) {
	s.mu.Lock()
	idle := s.opts.IdleTimeout
	if idle == 0 {
		idle = s.m.idle
	}
	if s.closed || idle < 0 || s.active > 0 || now.Sub(s.lastUsed) < idle {
		s.mu.Unlock()
		return false, nil
	}
	if s.opts.Persistent {
		defer s.mu.Unlock()
		if s.sb == nil {
			return false, nil
		}
		s.m.log.Debug("session suspended", "name", s.name, "idle", now.Sub(s.lastUsed))
		return true, s.suspendLocked(ctx)
	}
	// Closed before the lock is let go, so no call can start in between.
	s.closed = true
	s.m.log.Debug("session reaped", "name", s.name, "idle", now.Sub(s.lastUsed))
	s.mu.Unlock()
	return true, s.Remove(ctx)
}

// Close ends the session as Manager.Close does: its container and egress
// proxy are removed, and so is its workspace unless the session is
// Persistent, which Manager.Get can then resume. It runs on a context of its
// own. Safe to call twice; Remove still deletes a closed persistent session.
func (s *Session) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	s.forget()
	return s.end(ctx, !s.opts.Persistent)
}

// Remove ends the session and deletes its workspace, persistent or not.
// Safe to call twice, and after Close.
func (s *Session) Remove(ctx context.Context) error {
	s.forget()
	return s.end(ctx, true)
}

// forget drops the session from its manager's live sessions.
func (s *Session) forget() {
	s.m.mu.Lock()
	if s.m.sessions[s.name] == s {
		delete(s.m.sessions, s.name)
	}
	s.m.mu.Unlock()
}

// end stops the session; removeWorkspace also deletes its directory.
func (s *Session) end(ctx context.Context, removeWorkspace bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed && !removeWorkspace {
		return nil
	}
	s.closed = true
	err := s.suspendLocked(ctx)
	if removeWorkspace {
		err = errors.Join(err, s.removeDirs())
	}
	return err
}

// removeDirs deletes the session's directory and its workspace, which a
// pooled session keeps elsewhere, after its container is gone.
func (s *Session) removeDirs() error {
	err := fsutil.RemoveAll(s.dir)
	if s.pooled && s.ws != "" {
		err = errors.Join(err, fsutil.RemoveAll(s.ws))
	}
	return err
}

// suspendLocked removes the container and the proxy. s.mu is held.
func (s *Session) suspendLocked(ctx context.Context) error {
	var errs []error
	if s.sb != nil {
		errs = append(errs, s.sb.Remove(ctx))
		s.sb = nil
	}
	if s.px != nil {
		errs = append(errs, s.px.Close())
		s.px = nil
	}
	s.secrets = nil
	return errors.Join(errs...)
}

// startLocked creates the session's container (and proxy) and copies its
// secrets in. s.mu is held.
func (s *Session) startLocked(ctx context.Context) error {
	secrets, err := s.m.resolveSecrets(ctx, s.opts.Secrets)
	if err != nil {
		return err
	}
	if s.opts.Persistent {
		// A container of this session left by an earlier process.
		if _, err := s.m.c.Prune(ctx, sandbox.PruneRequest{All: true, Labels: map[string]string{labelState: s.m.stateTag, labelName: s.name}}); err != nil {
			return fmt.Errorf("remove stale containers: %w", err)
		}
	}
	var sb *sandbox.Sandbox
	var px *egress.Proxy
	if s.pooled && s.ws == "" {
		if sb, err = s.m.createPooled(ctx, s.m.pooledSpec(s.opts, "session")); err != nil {
			return err
		}
		s.ws = sb.Spec().Workspace
	} else {
		spec := s.m.sandboxSpec(s.opts, s.ws, "session", s.name)
		if s.pooled {
			spec.Env = nil // as in the pooled sandbox it replaces
		}
		if px, err = s.m.withProxy(&spec, s.opts.Egress); err != nil {
			return err
		}
		if sb, err = s.m.c.Create(ctx, spec); err != nil {
			return errors.Join(err, px.Close())
		}
	}
	s.sb, s.px, s.secrets = sb, px, secrets
	if len(secrets) > 0 {
		if err := copySecrets(ctx, sb, "secrets", secrets); err != nil {
			return errors.Join(err, s.suspendLocked(ctx))
		}
	}
	return nil
}

func (s *Session) saveLocked() error {
	if !s.opts.Persistent {
		return nil
	}
	opts := s.opts
	opts.Files = nil
	b, err := json.MarshalIndent(sessionMeta{Name: s.name, Options: opts, Requirements: s.reqs, Created: s.created}, "", "  ")
	if err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	// A rerun trusts this record, so it is never left half written.
	if err := atomicfile.WriteFile(filepath.Join(s.dir, sessionMetaFile), b, 0o600); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	return nil
}

// acquire marks a call as running, starting the container when the session
// is suspended.
func (s *Session) acquire(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("session %q: %w", s.name, ErrClosed)
	}
	if s.sb == nil {
		if err := s.startLocked(ctx); err != nil {
			return err
		}
	}
	s.active++
	s.runs++
	s.lastUsed = s.m.now()
	return nil
}

func (s *Session) release() {
	s.mu.Lock()
	s.active--
	s.lastUsed = s.m.now()
	s.mu.Unlock()
}

// Name is the session's name.
func (s *Session) Name() string { return s.name }

// Workspace is the host directory mounted at /workspace.
func (s *Session) Workspace() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws
}

// Info describes the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := SessionInfo{
		Name: s.name, Persistent: s.opts.Persistent, Workspace: s.ws,
		Created: s.created, LastUsed: s.lastUsed, Active: s.active, Runs: s.runs,
		Requirements: append([]string(nil), s.reqs.Packages...),
	}
	if s.sb != nil {
		info.Container = s.sb.ID()
	}
	return info
}

// RunPython runs code with python3 in the session. The code is passed as a
// file; it runs in /workspace with the session's environment.
func (s *Session) RunPython(ctx context.Context, code string, opts ExecOptions) (Result, error) {
	return s.run(ctx, opts, pythonJob(code))
}

// RunShell runs script in the session, passed as a file to opts.Shell.
func (s *Session) RunShell(ctx context.Context, script string, opts ExecOptions) (Result, error) {
	return s.run(ctx, opts, shellJob(script, opts.Shell))
}

// Exec runs argv in the session (no shell parses it), in /workspace.
func (s *Session) Exec(ctx context.Context, argv []string, opts ExecOptions) (Result, error) {
	if len(argv) == 0 || argv[0] == "" {
		return Result{}, optErr("argv", "empty command")
	}
	return s.run(ctx, opts, job{write: func(*runDir) ([]string, map[string]string, error) { return argv, nil, nil }})
}

// AddFiles writes files into the session's mounts/ directory.
func (s *Session) AddFiles(ctx context.Context, files ...File) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	return s.m.writeFiles(ctx, s.ws, files)
}

// Install adds reqs to the session's environment. The environment for the
// whole set installed so far is built (or taken from the cache) and
// replaces /workspace/.venv; do not install while commands of the session
// run. A failed install is described in the Install, with a nil error.
func (s *Session) Install(ctx context.Context, reqs Requirements) (*Install, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.installLocked(ctx, reqs)
	var ie *InstallError
	if errors.As(err, &ie) {
		return ie.Install, nil
	}
	return inst, err
}

// installLocked builds the environment of the merged requirements and
// copies it into the workspace. A failed pip run is an *InstallError.
func (s *Session) installLocked(ctx context.Context, reqs Requirements) (*Install, error) {
	merged := s.reqs.merge(reqs)
	if err := merged.validate(s.opts.Runtime); err != nil {
		return nil, err
	}
	env, inst, err := s.m.ensureEnv(ctx, s.m.imageOr(s.opts.Image), merged)
	if err != nil {
		return nil, err
	}
	if !inst.OK() {
		return nil, &InstallError{Install: inst}
	}
	if err := installInto(s.ws, env); err != nil {
		return nil, err
	}
	s.reqs = merged
	return inst, s.saveLocked()
}

// run executes one job in the session's container.
func (s *Session) run(ctx context.Context, eo ExecOptions, j job) (Result, error) {
	if err := errors.Join(eo.validate(), eo.validateLive(len(s.opts.Secrets) > 0)); err != nil {
		return Result{}, err
	}
	secrets, err := s.m.resolveSecrets(ctx, eo.Secrets)
	if err != nil {
		return Result{}, err
	}
	if err := s.acquire(ctx); err != nil {
		return Result{}, err
	}
	defer s.release()
	if err := s.m.writeFiles(ctx, s.ws, eo.Files); err != nil {
		return Result{}, err
	}
	rid := newRunID()
	dir, argv, req, err := j.open(s.ws, rid, eo, s.opts.Env)
	if err != nil {
		return Result{}, err
	}
	defer dir.remove()
	if s.pooled {
		// A pooled sandbox's spec has no environment: the session's goes
		// with each command.
		req.Env = merge(s.opts.Env, req.Env)
	}
	before := snapshot(s.ws)
	raw, sessionSecrets, px, err := s.exec(ctx, req, rid, secrets, dir.path("stats.json"), argv)
	if err != nil {
		return Result{}, err
	}
	mk := newMasker(sessionSecrets, secrets)
	res := s.m.finish(raw, dir, mk, s.opts.Limits, req.Timeout)
	res.Egress, res.EgressDropped = px.Events()
	if j.after != nil {
		j.after(dir, mk, &res)
	}
	set := collectArtifacts(s.ws, before, eo.Artifacts)
	res.Artifacts, res.ArtifactsDropped, res.ArtifactsSkipped = set.files, set.dropped, set.skipped
	return res, nil
}

// exec runs the wrapped command. When the container has stopped (the
// program stopped it, say by signalling its init), the session gets a fresh
// container and the command is tried once more: it never started.
func (s *Session) exec(ctx context.Context, req sandbox.ExecRequest, rid string, secrets map[string]string, stats string, argv []string) (sandbox.ExecResult, map[string]string, *egress.Proxy, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		if s.sb == nil {
			if err := s.startLocked(ctx); err != nil {
				s.mu.Unlock()
				return sandbox.ExecResult{}, nil, nil, err
			}
		}
		sb, px, sessionSecrets := s.sb, s.px, s.secrets
		s.mu.Unlock()
		var dirs []string
		if len(sessionSecrets) > 0 {
			dirs = append(dirs, secretsDir("secrets"))
		}
		err := error(nil)
		if len(secrets) > 0 {
			dir := "secrets-" + rid
			err = copySecrets(ctx, sb, dir, secrets)
			dirs = append(dirs, secretsDir(dir))
		}
		req.Cmd = wrap(stats, dirs, argv)
		var raw sandbox.ExecResult
		if err == nil {
			raw, err = sb.Exec(ctx, req)
		}
		if err == nil || ctx.Err() != nil || attempt > 0 || !errors.Is(err, sandbox.ErrNotRunning) {
			return raw, sessionSecrets, px, err
		}
		s.mu.Lock()
		if s.sb == sb {
			s.m.log.Debug("session container gone; starting a new one", "name", s.name)
			_ = s.suspendLocked(ctx)
		}
		s.mu.Unlock()
	}
}

// clearEphemeralSessions removes session directories without a record
// (sessions of a process that ended without closing them) and the temporary
// files a save cut short left beside a record.
func (m *Manager) clearEphemeralSessions() error {
	dir := filepath.Join(m.stateDir, "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read sessions: %w", err)
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !fileExists(filepath.Join(p, sessionMetaFile)) {
			errs = append(errs, fsutil.RemoveAll(p))
			continue
		}
		errs = append(errs, atomicfile.RemoveStale(p, sessionMetaFile))
	}
	return errors.Join(errs...)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// InstallError reports requirements that failed to install where no Result
// can carry the failure (creating a session).
type InstallError struct {
	Install *Install
}

func (e *InstallError) Error() string {
	msg := fmt.Sprintf("install requirements: pip exited %d", e.Install.ExitCode)
	if e.Install.TimedOut {
		msg = "install requirements: timed out"
	}
	if tail := lastLine(e.Install.Stderr.String()); tail != "" {
		msg += ": " + tail
	}
	return msg
}

func (e *InstallError) Unwrap() error { return ErrInstallFailed }
