package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
)

// Label keys put on everything the package creates, so that leftovers can be
// found and pruned.
const (
	LabelManaged = "swebox.managed"
	LabelSession = "swebox.session"
)

// Client creates sandboxes through one backend: a Docker engine by default.
// It is safe for concurrent use.
type Client struct {
	b       Backend
	log     *slog.Logger
	session string
	agent   agentState
	pool    *pool // nil: no warm pool
	reap    reaper
}

type config struct {
	docker  dockerConfig
	backend Backend // WithBackend; nil: Docker
	log     *slog.Logger
	session string
	noAgent bool // WithExecAgent(false)
	pool    *PoolOptions
}

// Option configures a Client.
type Option func(*config) error

// WithHost sets the engine address, e.g. unix:///var/run/docker.sock or
// tcp://10.0.0.5:2376. Default: DOCKER_HOST, else the platform's default socket.
func WithHost(host string) Option {
	return func(c *config) error {
		if host == "" {
			return errors.New("WithHost: empty host")
		}
		c.docker.host = host
		return nil
	}
}

// WithAPIVersion pins the Engine API version, e.g. "1.41".
// Default: DOCKER_API_VERSION, else negotiated with the engine.
func WithAPIVersion(v string) Option {
	return func(c *config) error {
		if v == "" {
			return errors.New("WithAPIVersion: empty version")
		}
		c.docker.apiVersion = v
		return nil
	}
}

// WithTLS makes the client verify the engine with ca and present cert/key.
// Default: DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem) when DOCKER_TLS_VERIFY
// or DOCKER_CERT_PATH is set, else no TLS.
func WithTLS(caFile, certFile, keyFile string) Option {
	return func(c *config) error {
		c.docker.tls = &tlsFiles{ca: caFile, cert: certFile, key: keyFile}
		return nil
	}
}

// WithLogger sets where the client logs. Default: a logger that discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		c.log = l
		return nil
	}
}

// WithSession sets the session id put on every object the client creates
// (label swebox.session), which Prune can select by. Default: a random id.
func WithSession(id string) Option {
	return func(c *config) error {
		if id == "" {
			return errors.New("WithSession: empty id")
		}
		c.session = id
		return nil
	}
}

// WithExecAgent turns the in-sandbox exec agent on or off. With it, a
// sandbox on a local Docker engine runs an agent (a small static binary
// mounted read-only) that Exec talks to over a Unix socket in a private
// per-sandbox directory, many times faster than the engine's exec; a pod on
// Kubernetes runs the same agent, copied in at start and reached over a
// port-forward (sandbox/kube). Where it cannot run or be reached (a remote
// engine, gVisor on Docker, an image it cannot run in, a command as another
// user), Exec uses the engine's exec with the same results. The agent's threads and each running command's
// shim count against Limits.PidsLimit; the sandbox's limit is raised by
// that much (see SECURITY.md). Default: on.
func WithExecAgent(on bool) Option {
	return func(c *config) error {
		c.noAgent = !on
		return nil
	}
}

// New builds a Client. It does not contact the engine; the first call that
// needs it does, and reports an unreachable engine as *EngineError.
//
// The backend is the Docker engine that the environment and the Docker
// options (WithHost, WithAPIVersion, WithTLS) select, or the one WithBackend
// gives.
func New(opts ...Option) (*Client, error) {
	cfg := config{log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if cfg.session == "" {
		cfg.session = randomID(6)
	}
	b := cfg.backend
	if b != nil {
		if err := cfg.docker.conflict(); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	} else {
		db, err := newDocker(cfg.docker)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		b = db
	}
	b.Bind(seamEnv(&cfg))
	c := &Client{b: b, log: cfg.log, session: cfg.session, agent: agentState{off: cfg.noAgent}}
	if cfg.pool != nil {
		c.pool = newPool(c, *cfg.pool)
	}
	return c, nil
}

// Session is the id put on every object this client creates.
func (c *Client) Session() string { return c.session }

// Host is the engine address the client talks to.
func (c *Client) Host() string { return c.b.Host() }

// SharesHostFiles reports whether the client's sandboxes run on this
// machine and see its files through a bind mount (Spec.Workspace, Mount):
// true on a local Docker engine; false on a remote engine or a cluster,
// where a workspace is copied in.
func (c *Client) SharesHostFiles() bool { return info(c.b).SharesHostFiles }

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.b.Ping(ctx); err != nil {
		return c.engineErr("ping engine", err)
	}
	return nil
}

// Runtimes lists the OCI runtimes the engine offers, e.g. "runc", "runsc".
func (c *Client) Runtimes(ctx context.Context) ([]string, error) {
	names, err := c.b.Runtimes(ctx)
	if err != nil {
		return nil, c.engineErr("read engine info", err)
	}
	return names, nil
}

// Close removes the sandboxes the client's pool holds and releases the
// client's connections. Other sandboxes are not removed. Safe to call twice.
func (c *Client) Close() error {
	if c.pool != nil {
		c.pool.close()
	}
	c.stopReap()
	return c.b.Close()
}

// labels returns the labels every created object carries, merged with extra.
func (c *Client) labels(extra map[string]string) map[string]string {
	l := make(map[string]string, len(extra)+2)
	for k, v := range extra {
		l[k] = v
	}
	l[LabelManaged] = "true"
	l[LabelSession] = c.session
	if id := ownerID(); id != "" {
		l[LabelOwner] = id
	}
	return l
}

// engineErr wraps err as an *EngineError when it says the engine is
// unreachable, else with the verb phrase op.
func (c *Client) engineErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errUnreachable) {
		return &EngineError{Host: c.Host(), Op: op, Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
