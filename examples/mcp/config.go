package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/swebox/swebox/agent"
)

// config is what the flags set: the server's limits, which no tool argument
// can raise.
type config struct {
	HTTPAddr string // empty: stdio
	Token    string

	Name     string // label of every container the server creates
	LogFile  string // empty: stderr
	StateDir string

	Images       []string // the first is the default
	Timeout      time.Duration
	OutputLimit  int
	ArtifactCap  int64 // bytes of artifact content inlined in one result
	StoreLimit   int64 // bytes of content kept for resource links
	Memory       int64
	MaxSessions  int // per client
	MaxRunning   int // sandboxes running tool calls at once
	Pool         int // started sandboxes kept ready per spec; 0: no pool
	IdleExpiry   time.Duration
	EgressAllow  []string // hosts sessions may ask for; empty: none
	FetchAllow   []string // hosts whose URLs are fetched at any address
	FetchLimit   int64    // bytes fetched for one file URL
	WheelDir     string
	PipIndex     string
	PipHosts     []string
	Datasets     []string
	Repos        []string
	ImageMap     string // the eval command's --image_map
	Namespace    string // the eval command's --namespace
	ImageTag     string // the eval command's --instance_image_tag
	EvalTimeout  time.Duration
	ProgressTick time.Duration
}

// Defaults of the flags.
const (
	defaultName        = "swebox-mcp"
	defaultTimeout     = 60 * time.Second
	defaultOutputLimit = 32 << 10
	defaultArtifactCap = 1 << 20
	defaultStoreLimit  = 256 << 20
	defaultMemory      = 1 << 30
	defaultMaxSessions = 4
	defaultMaxRunning  = 8
	// defaultPool keeps two sandboxes ready per kind of run an agent
	// repeats: enough for the next call while the one before is still
	// refilled, and two idle containers (a few MiB each) are a small price;
	// the pool keeps none for a kind asked for only once, and drops a
	// kind's after five idle minutes.
	defaultPool        = 2
	defaultIdleExpiry  = 10 * time.Minute
	defaultEvalTimeout = 30 * time.Minute
)

// errUsage marks a bad command line; the message says what is wrong.
var errUsage = errors.New("usage")

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

type bytesFlag struct{ v *int64 }

func (b bytesFlag) String() string {
	if b.v == nil {
		return ""
	}
	return units.BytesSize(float64(*b.v))
}
func (b bytesFlag) Set(s string) error {
	n, err := units.RAMInBytes(s)
	if err != nil {
		return err
	}
	*b.v = n
	return nil
}

// parseFlags reads args (without the program name). getenv supplies
// SWEBOX_MCP_TOKEN.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp [flags]\n\nServes swebox's sandboxes and SWE-bench evaluator as MCP tools, over stdio\n(the default) or streamable HTTP (--http).\n\nflags:")
		fs.PrintDefaults()
	}
	var images, egress, datasets, repos, pipHosts, fetchAllow listFlag
	var outputLimit, artifactCap, storeLimit, memory int64 = defaultOutputLimit, defaultArtifactCap, defaultStoreLimit, defaultMemory
	fetchLimit := int64(agent.DefaultFetchLimit)
	fs.StringVar(&cfg.HTTPAddr, "http", "", "serve streamable HTTP on `ADDR` (host:port; a bare :port binds 127.0.0.1) instead of stdio")
	fs.StringVar(&cfg.Token, "token", "", "bearer token HTTP clients must send (default $SWEBOX_MCP_TOKEN, else a generated one printed once to stderr)")
	fs.StringVar(&cfg.Name, "name", defaultName, "label (swebox.session) of every container this server creates; at start, containers left with it by an earlier server are removed, so servers sharing an engine need distinct names")
	fs.StringVar(&cfg.LogFile, "log-file", "", "append the per-call log (one JSON line per tool call) to `FILE` instead of stderr")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "directory for workspaces and cached environments (default: a temporary one, removed at exit)")
	fs.Var(&images, "image", "image tools may run, repeatable or comma-separated; the first is the default (default "+agent.DefaultImage+")")
	fs.DurationVar(&cfg.Timeout, "timeout", defaultTimeout, "longest run a tool call may ask for (timeout_s is capped to it)")
	fs.Var(bytesFlag{&outputLimit}, "output-limit", "bytes of stdout and of stderr kept per call (head and tail)")
	fs.Var(bytesFlag{&artifactCap}, "artifact-limit", "bytes of artifact and file content inlined in one result; larger files come back as resource links")
	fs.Var(bytesFlag{&storeLimit}, "store-limit", "bytes of linked content the server keeps for resources/read (oldest dropped first)")
	fs.Var(bytesFlag{&memory}, "memory", "memory limit of every sandbox")
	fs.IntVar(&cfg.MaxSessions, "max-sessions", defaultMaxSessions, "sessions one client may hold open")
	fs.IntVar(&cfg.MaxRunning, "max-running", defaultMaxRunning, "tool calls running sandboxes at once; others wait")
	fs.IntVar(&cfg.Pool, "pool", defaultPool, "started sandboxes kept ready for each kind of run_* call and session that is asked for more than once (the same image and limits, no egress), removed after 5 idle minutes; 0: none, every call starts its own")
	fs.DurationVar(&cfg.IdleExpiry, "idle", defaultIdleExpiry, "a session unused this long is closed; in HTTP mode, an MCP session too")
	fs.Var(&egress, "egress-allow", "hosts a session may ask to reach (session_create egress), repeatable or comma-separated; default none: no network at all")
	fs.Var(&fetchAllow, "fetch-allow", "hosts (`HOST` or HOST:PORT) whose file URLs the server fetches even at a loopback or private address, e.g. an internal file server, repeatable or comma-separated; default none: public addresses only")
	fs.Var(bytesFlag{&fetchLimit}, "fetch-limit", "bytes the server fetches for one file URL")
	fs.StringVar(&cfg.WheelDir, "wheel-dir", "", "host directory of wheels that requirements install from, offline (default: none; requirements are refused unless --pip-index is set)")
	fs.StringVar(&cfg.PipIndex, "pip-index", "", "package index `URL` requirements install from; only the install step reaches it and --pip-host")
	fs.Var(&pipHosts, "pip-host", "further hosts the install step may reach with --pip-index, e.g. files.pythonhosted.org")
	fs.Var(&datasets, "dataset", "SWE-bench dataset `FILE` (JSON or JSONL) for swebench_evaluate and swebench_grade_log, repeatable; its name is the file's base name without extension")
	fs.Var(&repos, "repos", "directory of local repository sources (owner__name.git) for swebench_evaluate, repeatable")
	fs.StringVar(&cfg.ImageMap, "image_map", "", "workspace mode for the swebench_task_* tools: JSON `FILE` mapping owner/name or owner/name:version to an image, as the eval command's --image_map")
	fs.StringVar(&cfg.Namespace, "namespace", "", "prebuilt mode for the swebench_task_* tools: official instance images <NS>/sweb.eval.x86_64.<id>:<tag>, as the eval command's --namespace ('none': workspace mode)")
	fs.StringVar(&cfg.ImageTag, "instance_image_tag", "", "prebuilt mode for the swebench_task_* tools: tag of the instance images, as the eval command's --instance_image_tag")
	fs.DurationVar(&cfg.EvalTimeout, "eval-timeout", defaultEvalTimeout, "longest a swebench_evaluate eval script may run")
	fs.DurationVar(&cfg.ProgressTick, "progress-interval", time.Second, "how often long calls send progress notifications")
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg.Images, cfg.EgressAllow, cfg.Datasets, cfg.Repos, cfg.PipHosts, cfg.FetchAllow = images, egress, datasets, repos, pipHosts, fetchAllow
	cfg.FetchLimit = fetchLimit
	if len(cfg.Images) == 0 {
		cfg.Images = []string{agent.DefaultImage}
	}
	cfg.OutputLimit, cfg.ArtifactCap, cfg.StoreLimit, cfg.Memory = int(outputLimit), artifactCap, storeLimit, memory
	if cfg.Token == "" {
		cfg.Token = getenv("SWEBOX_MCP_TOKEN")
	}
	if err := cfg.validate(); err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	return cfg, nil
}

func (c *config) validate() error {
	switch {
	case c.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case c.OutputLimit < 1024:
		return errors.New("--output-limit must be at least 1KiB")
	case c.ArtifactCap < 0 || c.StoreLimit < 0:
		return errors.New("--artifact-limit and --store-limit must not be negative")
	case c.Memory < 64<<20:
		return errors.New("--memory must be at least 64MiB")
	case c.MaxSessions < 0:
		return errors.New("--max-sessions must not be negative")
	case c.MaxRunning < 1:
		return errors.New("--max-running must be at least 1")
	case c.FetchLimit <= 0:
		return errors.New("--fetch-limit must be positive")
	case c.Pool < 0 || c.Pool > 256:
		return errors.New("--pool must be 0 to 256")
	case c.IdleExpiry <= 0:
		return errors.New("--idle must be positive")
	case c.EvalTimeout <= 0 || c.ProgressTick <= 0:
		return errors.New("--eval-timeout and --progress-interval must be positive")
	case c.Name == "" || strings.ContainsAny(c.Name, " =,"):
		return errors.New("--name must be a non-empty label value without spaces, '=' or ','")
	}
	if c.HTTPAddr != "" {
		addr, err := listenAddr(c.HTTPAddr)
		if err != nil {
			return err
		}
		c.HTTPAddr = addr
	}
	for _, d := range c.Datasets {
		if _, err := os.Stat(d); err != nil {
			return fmt.Errorf("--dataset: %w", err)
		}
	}
	return nil
}

// listenAddr resolves --http: a missing host means loopback, never every
// interface.
func listenAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("--http %q: want host:port or :port: %w", s, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
