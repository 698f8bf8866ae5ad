package agent

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/secrets"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
)

// Defaults of the package. Each applies where the corresponding option or
// field is zero.
const (
	// DefaultImage is the image sandboxes run when no other is given: the
	// project's Python image (Debian bookworm, python3 3.11, pytest).
	DefaultImage = sandbox.ProjectImage
	// DefaultTimeout bounds one run.
	DefaultTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a session may sit unused before the
	// reaper ends it.
	DefaultIdleTimeout = 15 * time.Minute
	// DefaultInstallTimeout bounds one requirements install.
	DefaultInstallTimeout = 10 * time.Minute
	// DefaultFetchLimit caps the bytes fetched for one File given by URL.
	DefaultFetchLimit = 64 << 20
	// DefaultMaxArtifacts caps the artifacts one run returns.
	DefaultMaxArtifacts = 64
	// DefaultMaxArtifactBytes caps the artifact content one run returns.
	DefaultMaxArtifactBytes = 32 << 20
)

// ScriptDir is where sandboxes see the library's scripts (the launcher and
// the test-case harness), read-only; their frames in a traceback are not the
// user's.
const ScriptDir = "/opt/swebox"

// teardownTimeout bounds the engine calls of Close, which runs on a context
// of its own.
const teardownTimeout = 2 * time.Minute

// Paths inside a sandbox.
const (
	libTarget    = ScriptDir
	venvTarget   = sandbox.WorkspaceDir + "/.venv"
	egressTarget = "/run/swebox/egress"   // the egress proxy's socket directory, read-only
	secretsRoot  = "/tmp/.swebox"         // secrets live on the /tmp tmpfs, never on disk
	egressEnv    = "SWEBOX_EGRESS_SOCKET" // tells the launcher where the proxy is
	labelAgent   = "swebox.agent"         // "run", "install" or "session"
	labelName    = "swebox.agent.session" // a session's name
	labelState   = "swebox.agent.state"   // hash of the manager's state directory
)

//go:embed scripts
var scripts embed.FS

// Manager runs code in sandboxes: one-shot runs with a fresh workspace each
// time, and named sessions whose workspace and container persist across
// calls. It owns a state directory (workspaces, the environment cache and
// the scripts mounted into sandboxes). Its methods are safe for concurrent
// use; Close ends every session.
//
// With a client that keeps a warm pool (sandbox.WithPool, or WithPool
// here), one-shot runs and new sessions that are not persistent and grant
// no egress take a started sandbox from the pool, with a workspace directory
// made for that sandbox alone (sandbox.Client.CreateWithWorkspace), so
// pooled sandboxes and workspaces are never shared or reused. The program
// runs as a command in it with the same files, environment, limits and
// timeout as in a sandbox of its own. A one-shot's sandbox is removed, in
// the background, as soon as its program ends: a process the program left
// running dies then rather than with the program, so what such a process
// writes under output/ in the moments between may be among the artifacts. Runs with Requirements are pooled too: their environment,
// cached by the hash of the requirements, is the same mount for every run
// with them. Not pooled: runs and sessions with Egress (each has a proxy of
// its own, whose socket is mounted into its sandbox), persistent sessions
// (their workspace, in the state directory, outlives any sandbox) and the
// installs that build environments.
type Manager struct {
	c         *sandbox.Client
	ownClient bool
	log       *slog.Logger
	image     string
	stateDir  string
	ownState  bool
	stateTag  string
	libDir    string
	envDir    string
	idle      time.Duration
	reapEvery time.Duration
	resolver  secrets.Resolver
	fetch     *http.Client
	fetchMax  int64
	now       func() time.Time
	lock      *os.File

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool
	removing sync.WaitGroup // removals of pooled sandboxes, in the background
	stop     chan struct{}
	stopped  chan struct{}
	builds   singleflight.Group
}

type config struct {
	image     string
	stateDir  string
	envDir    string
	log       *slog.Logger
	idle      time.Duration
	reapEvery time.Duration
	resolver  secrets.Resolver
	fetch     *http.Client
	fetchMax  int64
	now       func() time.Time
	pool      *sandbox.PoolOptions
}

// Option configures a Manager. New applies the options in order; a bad
// value is an *OptionError naming the option.
type Option func(*config) error

// WithImage sets the image of sandboxes that name none. Default: DefaultImage.
func WithImage(ref string) Option {
	return func(c *config) error {
		if ref == "" {
			return optErr("WithImage", "empty image")
		}
		c.image = ref
		return nil
	}
}

// WithStateDir keeps the manager's state (session workspaces, the
// environment cache) in dir, so persistent sessions and cached environments
// outlive the process. One manager at a time may use a directory. Default: a
// fresh temporary directory that Close removes.
func WithStateDir(dir string) Option {
	return absDirOption("WithStateDir", dir, func(c *config) { c.stateDir = dir })
}

// WithEnvCache keeps built Python environments in dir, which several
// managers may share. Default: "envs" in the state directory.
func WithEnvCache(dir string) Option {
	return absDirOption("WithEnvCache", dir, func(c *config) { c.envDir = dir })
}

func absDirOption(name, dir string, set func(*config)) Option {
	return func(c *config) error {
		if !filepath.IsAbs(dir) {
			return optErr(name, "%q is not an absolute path", dir)
		}
		set(c)
		return nil
	}
}

// WithLogger sets where the manager logs (refused egress among other
// things). Default: a logger that discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return optErr("WithLogger", "nil logger")
		}
		c.log = l
		return nil
	}
}

// WithIdleTimeout sets how long a session may go unused before it is
// reaped, for sessions that set no IdleTimeout. Default: DefaultIdleTimeout.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return optErr("WithIdleTimeout", "%v is not positive", d)
		}
		c.idle = d
		return nil
	}
}

// WithReapInterval sets how often idle sessions are looked for; a negative
// interval turns the background reaper off (Reap still works). Default: a
// quarter of the idle timeout, at most one minute.
func WithReapInterval(d time.Duration) Option {
	return func(c *config) error {
		if d == 0 {
			return optErr("WithReapInterval", "zero interval")
		}
		c.reapEvery = d
		return nil
	}
}

// WithSecretResolver sets what turns secret names into values. Default:
// none; asking for a secret is then an error wrapping ErrNoResolver.
func WithSecretResolver(r secrets.Resolver) Option {
	return func(c *config) error {
		if r == nil {
			return optErr("WithSecretResolver", "nil resolver")
		}
		c.resolver = r
		return nil
	}
}

// WithHTTPClient sets the client that fetches Files given by URL, used as
// is. Default: a client that refuses loopback, private, link-local and
// metadata addresses, so a URL cannot reach the host's own services.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return optErr("WithHTTPClient", "nil client")
		}
		c.fetch = hc
		return nil
	}
}

// WithFetchLimit caps the bytes fetched for one File given by URL.
// Default: DefaultFetchLimit.
func WithFetchLimit(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return optErr("WithFetchLimit", "%d is not positive", n)
		}
		c.fetchMax = n
		return nil
	}
}

// WithPool gives the client the manager builds itself (New with a nil
// client) a warm pool of started sandboxes (sandbox.WithPool), which
// one-shot runs and sessions take from; see [Manager] for which do. A
// caller's client brings its own pool or none, so combining WithPool with
// one is an error. Default: no pool.
func WithPool(o sandbox.PoolOptions) Option {
	return func(c *config) error {
		c.pool = &o
		return nil
	}
}

// New returns a Manager that creates sandboxes with c; a nil c makes the
// manager build one with sandbox.New and close it on Close.
func New(c *sandbox.Client, opts ...Option) (*Manager, error) {
	cfg := config{
		image:    DefaultImage,
		log:      slog.New(slog.DiscardHandler),
		idle:     DefaultIdleTimeout,
		fetchMax: DefaultFetchLimit,
		now:      time.Now,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	if cfg.pool != nil && c != nil {
		return nil, fmt.Errorf("agent: %w", optErr("WithPool", "the manager was given a client, whose pool (or none) it uses; set the pool with sandbox.WithPool on that client"))
	}
	if cfg.reapEvery == 0 {
		cfg.reapEvery = min(cfg.idle/4, time.Minute)
	}
	if cfg.fetch == nil {
		cfg.fetch = egress.PublicClient()
	}
	m := &Manager{
		c: c, log: cfg.log, image: cfg.image, idle: cfg.idle, reapEvery: cfg.reapEvery,
		resolver: cfg.resolver, fetch: cfg.fetch, fetchMax: cfg.fetchMax, now: cfg.now,
		sessions: map[string]*Session{},
	}
	if m.c == nil {
		var err error
		sopts := []sandbox.Option{sandbox.WithLogger(cfg.log)}
		if cfg.pool != nil {
			sopts = append(sopts, sandbox.WithPool(*cfg.pool))
		}
		if m.c, err = sandbox.New(sopts...); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		m.ownClient = true
	}
	if err := m.initState(cfg); err != nil {
		return nil, errors.Join(fmt.Errorf("agent: %w", err), m.closeResources())
	}
	if m.reapEvery > 0 {
		m.stop, m.stopped = make(chan struct{}), make(chan struct{})
		go m.reaper()
	}
	return m, nil
}

func (m *Manager) initState(cfg config) error {
	m.stateDir = cfg.stateDir
	if m.stateDir == "" {
		dir, err := os.MkdirTemp("", "swebox-agent-")
		if err != nil {
			return fmt.Errorf("create state directory: %w", err)
		}
		m.stateDir, m.ownState = dir, true
	}
	if err := os.MkdirAll(m.stateDir, 0o755); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	lock, err := lockDir(m.stateDir)
	if err != nil {
		return err
	}
	m.lock = lock
	sum := sha256.Sum256([]byte(m.stateDir))
	m.stateTag = hex.EncodeToString(sum[:6])
	m.envDir = cfg.envDir
	if m.envDir == "" {
		m.envDir = filepath.Join(m.stateDir, "envs")
	}
	m.libDir = filepath.Join(m.stateDir, "lib")
	// One-shot workspaces left by a process that died.
	if err := fsutil.RemoveAll(filepath.Join(m.stateDir, "runs")); err != nil {
		return fmt.Errorf("clear old runs: %w", err)
	}
	for _, d := range []string{m.envDir, m.libDir, filepath.Join(m.stateDir, "runs"), filepath.Join(m.stateDir, "sessions")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	// The scripts are rewritten on every start, so an upgraded library
	// never runs an old launcher.
	entries, err := fs.ReadDir(scripts, "scripts")
	if err != nil {
		return fmt.Errorf("read embedded scripts: %w", err)
	}
	for _, e := range entries {
		b, err := scripts.ReadFile("scripts/" + e.Name())
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(m.libDir, e.Name()), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", e.Name(), err)
		}
	}
	// Sessions of a process that died without closing them, unless
	// persistent.
	return m.clearEphemeralSessions()
}

// Client is the sandbox client the manager creates sandboxes with.
func (m *Manager) Client() *sandbox.Client { return m.c }

// StateDir is the directory the manager keeps its state in.
func (m *Manager) StateDir() string { return m.stateDir }

// Close ends every session: ephemeral ones are removed with their
// workspace, persistent ones are suspended (their container is removed, the
// workspace kept). It removes the state directory when the manager made it.
// Safe to call twice.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	sessions := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		sessions = append(sessions, s)
	}
	m.sessions = map[string]*Session{}
	m.mu.Unlock()
	if m.stop != nil {
		close(m.stop)
		<-m.stopped
	}
	ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	var errs []error
	for _, s := range sessions {
		errs = append(errs, s.end(ctx, !s.opts.Persistent))
	}
	m.removing.Wait()
	errs = append(errs, m.closeResources())
	return errors.Join(errs...)
}

func (m *Manager) closeResources() error {
	var errs []error
	if m.ownState && m.stateDir != "" {
		errs = append(errs, fsutil.RemoveAll(m.stateDir))
	}
	if m.lock != nil {
		errs = append(errs, m.lock.Close())
		m.lock = nil
	}
	if m.ownClient {
		errs = append(errs, m.c.Close())
	}
	return errors.Join(errs...)
}

// labels are put on every container the manager creates, besides the
// sandbox package's own.
func (m *Manager) labels(kind, name string) map[string]string {
	l := map[string]string{labelAgent: kind, labelState: m.stateTag}
	if name != "" {
		l[labelName] = name
	}
	return l
}

func (m *Manager) imageOr(ref string) string {
	if ref != "" {
		return ref
	}
	return m.image
}
