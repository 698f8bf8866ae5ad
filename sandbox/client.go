package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/tlsconfig"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Label keys put on everything the package creates, so that leftovers can be
// found and pruned.
const (
	LabelManaged = "swebox.managed"
	LabelSession = "swebox.session"
)

// DockerAPI lists the Docker Engine client methods the package calls.
// *client.Client satisfies it; unit tests embed it in fakes.
type DockerAPI interface {
	Ping(ctx context.Context) (types.Ping, error)
	Info(ctx context.Context) (system.Info, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerAttach(ctx context.Context, containerID string, options container.AttachOptions) (types.HijackedResponse, error)
	ContainerWait(ctx context.Context, containerID string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerStop(ctx context.Context, containerID string, options container.StopOptions) error
	ContainerKill(ctx context.Context, containerID, signal string) error
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerLogs(ctx context.Context, containerID string, options container.LogsOptions) (io.ReadCloser, error)
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
	ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error)
	CopyToContainer(ctx context.Context, containerID, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
	CopyFromContainer(ctx context.Context, containerID, srcPath string) (io.ReadCloser, container.PathStat, error)
	ImageInspect(ctx context.Context, imageID string, inspectOpts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, refStr string, options image.PullOptions) (io.ReadCloser, error)
	ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error)
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
	ImageList(ctx context.Context, options image.ListOptions) ([]image.Summary, error)
	VolumeList(ctx context.Context, options volume.ListOptions) (volume.ListResponse, error)
	VolumeRemove(ctx context.Context, volumeID string, force bool) error
	NetworkCreate(ctx context.Context, name string, options network.CreateOptions) (network.CreateResponse, error)
	NetworkConnect(ctx context.Context, networkID, containerID string, config *network.EndpointSettings) error
	NetworkList(ctx context.Context, options network.ListOptions) ([]network.Summary, error)
	NetworkRemove(ctx context.Context, networkID string) error
	DaemonHost() string
	Close() error
}

// Client creates sandboxes on one Docker engine. It is safe for concurrent use.
type Client struct {
	api     DockerAPI
	log     *slog.Logger
	session string
	host    string
	owned   bool // api was made by New and is closed by Close
}

type config struct {
	host       string
	apiVersion string
	tls        *tlsFiles
	log        *slog.Logger
	session    string
	api        DockerAPI
}

type tlsFiles struct{ ca, cert, key string }

// Option configures a Client.
type Option func(*config) error

// WithHost sets the engine address, e.g. unix:///var/run/docker.sock or
// tcp://10.0.0.5:2376. Default: DOCKER_HOST, else the platform's default socket.
func WithHost(host string) Option {
	return func(c *config) error {
		if host == "" {
			return errors.New("WithHost: empty host")
		}
		c.host = host
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
		c.apiVersion = v
		return nil
	}
}

// WithTLS makes the client verify the engine with ca and present cert/key.
// Default: DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem) when DOCKER_TLS_VERIFY
// or DOCKER_CERT_PATH is set, else no TLS.
func WithTLS(caFile, certFile, keyFile string) Option {
	return func(c *config) error {
		c.tls = &tlsFiles{ca: caFile, cert: certFile, key: keyFile}
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

// WithDockerAPI makes the client use api instead of dialling an engine;
// host, version and TLS options are then ignored. Default: a *client.Client
// built from the other options.
func WithDockerAPI(api DockerAPI) Option {
	return func(c *config) error {
		if api == nil {
			return errors.New("WithDockerAPI: nil api")
		}
		c.api = api
		return nil
	}
}

// New builds a Client. It does not contact the engine; the first call that
// needs it does, and reports an unreachable engine as *EngineError.
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
	if cfg.api != nil {
		return &Client{api: cfg.api, log: cfg.log, session: cfg.session, host: cfg.api.DaemonHost()}, nil
	}
	copts := []client.Opt{client.WithHostFromEnv(), client.WithVersionFromEnv()}
	if cfg.host != "" {
		copts = append(copts, client.WithHost(cfg.host))
	}
	if cfg.tls == nil {
		if dir := os.Getenv("DOCKER_CERT_PATH"); dir != "" {
			cfg.tls = &tlsFiles{
				ca:   filepath.Join(dir, "ca.pem"),
				cert: filepath.Join(dir, "cert.pem"),
				key:  filepath.Join(dir, "key.pem"),
			}
		}
	}
	if cfg.tls != nil {
		hc, err := tlsHTTPClient(*cfg.tls, os.Getenv("DOCKER_TLS_VERIFY") != "" || cfg.tls.ca != "")
		if err != nil {
			return nil, fmt.Errorf("sandbox: configure TLS: %w", err)
		}
		copts = append(copts, client.WithHTTPClient(hc))
	}
	if cfg.apiVersion != "" {
		copts = append(copts, client.WithVersion(cfg.apiVersion))
	} else if os.Getenv("DOCKER_API_VERSION") == "" {
		copts = append(copts, client.WithAPIVersionNegotiation())
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("sandbox: create docker client: %w", err)
	}
	return &Client{api: cli, log: cfg.log, session: cfg.session, host: cli.DaemonHost(), owned: true}, nil
}

func tlsHTTPClient(f tlsFiles, verify bool) (*http.Client, error) {
	tc, err := tlsconfig.Client(tlsconfig.Options{
		CAFile:             f.ca,
		CertFile:           f.cert,
		KeyFile:            f.key,
		InsecureSkipVerify: !verify,
		ExclusiveRootPools: true,
	})
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, CheckRedirect: client.CheckRedirect}, nil
}

// Session is the id put on every object this client creates.
func (c *Client) Session() string { return c.session }

// Host is the engine address the client talks to.
func (c *Client) Host() string { return c.host }

// API is the underlying engine client, for callers that need an engine call
// the package does not wrap.
func (c *Client) API() DockerAPI { return c.api }

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.api.Ping(ctx); err != nil {
		return c.engineErr("ping engine", err)
	}
	return nil
}

// Runtimes lists the OCI runtimes the engine offers, e.g. "runc", "runsc".
func (c *Client) Runtimes(ctx context.Context) ([]string, error) {
	info, err := c.api.Info(ctx)
	if err != nil {
		return nil, c.engineErr("read engine info", err)
	}
	names := make([]string, 0, len(info.Runtimes))
	for name := range info.Runtimes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// Close releases the client's connections. Sandboxes are not removed.
// Safe to call twice.
func (c *Client) Close() error {
	if !c.owned {
		return nil
	}
	return c.api.Close()
}

// labels returns the labels every created object carries, merged with extra.
func (c *Client) labels(extra map[string]string) map[string]string {
	l := make(map[string]string, len(extra)+2)
	for k, v := range extra {
		l[k] = v
	}
	l[LabelManaged] = "true"
	l[LabelSession] = c.session
	return l
}

// engineErr wraps err as an *EngineError when it says the engine is
// unreachable, else with the verb phrase op.
func (c *Client) engineErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if client.IsErrConnectionFailed(err) || isDialError(err) {
		return &EngineError{Host: c.host, Op: op, Err: err}
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
