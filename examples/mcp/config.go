package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/engineflags"
)

// config is what the flags set: the server's limits, which no tool argument
// can raise.
type config struct {
	HTTPAddr   string // empty: stdio
	Token      string
	TokensFile string        // --tokens: named clients, one a line
	Clients    []clientToken // read from TokensFile
	ClientIdle time.Duration // a stateless client idle this long is dropped

	Name     string // label of every container the server creates
	LogFile  string // empty: stderr
	StateDir string

	Images           []string // the first is the default
	Timeout          time.Duration
	OutputLimit      int
	ArtifactCap      int64 // bytes of artifact content inlined in one result
	StoreLimit       int64 // bytes of content kept for resource links
	Memory           int64
	MaxSessions      int // per client
	MaxSessionsTotal int // across all clients
	MaxJobsTotal     int // background jobs running, across all clients
	MaxRunning       int // sandboxes running tool calls at once
	Pool             int // started sandboxes kept ready per spec; 0: no pool
	IdleExpiry       time.Duration
	EgressAllow      []string // hosts sessions may ask for; empty: none
	FetchAllow       []string // hosts whose URLs are fetched at any address
	FetchLimit       int64    // bytes fetched for one file URL
	WheelDir         string
	PipIndex         string
	PipHosts         []string
	Datasets         []string
	Repos            []string
	ImageMap         string // the eval command's --image_map
	Namespace        string // the eval command's --namespace
	ImageTag         string // the eval command's --instance_image_tag
	EvalTimeout      time.Duration
	ProgressTick     time.Duration
	InstanceIDs      []string // the tasks offered; empty: every row
	TestFeedback     bool     // test names, reports and test output reach clients
	Strict           bool     // strict grading (swebench.GradingStrict) for every evaluation and task
	MaxSubmissions   int      // per task session; 0: no limit
	NoTaskSpare      bool     // task sessions start no sandbox ahead for their next reset
	ReadMemory       int64    // bytes of file content session_read_file calls hold at once

	// Engine's Kubeconfig runs every sandbox as a pod of that cluster (a
	// build with the kube tag only), with the eval command's --kube_*
	// flags (package engineflags, the flags both commands share).
	engineflags.Engine
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
	// defaultMaxSessionsTotal and defaultMaxJobsTotal bound what every
	// client together holds: a token holder can open as many MCP sessions
	// as it likes, each with its own per-client limits.
	defaultMaxSessionsTotal = 16
	defaultMaxJobsTotal     = 64
	defaultMaxRunning       = 8
	// defaultPool keeps two sandboxes ready per kind of run an agent
	// repeats: enough for the next call while the one before is still
	// refilled, and two idle containers (a few MiB each) are a small price;
	// the pool keeps none for a kind asked for only once, and drops a
	// kind's after five idle minutes.
	defaultPool        = 2
	defaultIdleExpiry  = 10 * time.Minute
	defaultEvalTimeout = 30 * time.Minute
	// defaultReadMemory bounds the file content that concurrent
	// session_read_file calls hold, server-wide: two reads as large as
	// --store_limit allows.
	defaultReadMemory = 2 * defaultStoreLimit
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

// secondsFlag is a duration given as seconds ("60", as eval's --timeout
// takes it) or with a unit ("2m", "1h30m").
func secondsFlag(d *time.Duration) flag.Value { return (*engineflags.SecondsValue)(d) }

// progName is how the help names the server: the name it was started by
// (swebox-mcp, as the README installs it).
func progName() string {
	if len(os.Args) > 0 {
		if b := filepath.Base(os.Args[0]); b != "." && b != string(filepath.Separator) {
			return b
		}
	}
	return "swebox-mcp"
}

// minTokenLen is the shortest bearer token the server accepts: 128 bits
// written in hex. A shorter one can be guessed, and the token is all that
// guards the sandboxes over HTTP.
const minTokenLen = 32

// underscoreNames rewrites flag names written with hyphens (--log-file, the
// spelling of earlier releases) to the underscores of eval's flags
// (--log_file), so that both commands take one style. Values are left
// alone: the word after a flag that takes a value is skipped.
func underscoreNames(fs *flag.FlagSet, args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break // the flag package stops here too
		}
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		name, value, hasValue := strings.Cut(a[len(dashes):], "=")
		f := fs.Lookup(strings.ReplaceAll(name, "-", "_"))
		if f == nil {
			continue
		}
		out[i] = dashes + f.Name
		if hasValue {
			out[i] += "=" + value
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			i++
		}
	}
	return out
}

// parseFlags reads args (without the program name). getenv supplies
// SWEBOX_MCP_TOKEN.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	cfg := config{Engine: engineflags.Defaults()}
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: "+progName()+" [flags]\n\nServes swebox's sandboxes and SWE-bench evaluator as MCP tools, over stdio\n(the default) or streamable HTTP (--http).\n\nflags:")
		fs.PrintDefaults()
	}
	var images, egress, datasets, repos, pipHosts, fetchAllow listFlag
	var outputLimit, artifactCap, storeLimit, memory int64 = defaultOutputLimit, defaultArtifactCap, defaultStoreLimit, defaultMemory
	var instanceIDs listFlag
	readMemory := int64(defaultReadMemory)
	fetchLimit := int64(agent.DefaultFetchLimit)
	fs.StringVar(&cfg.HTTPAddr, "http", "", "serve streamable HTTP on `ADDR` (host:port; a bare :port binds 127.0.0.1) instead of stdio")
	fs.StringVar(&cfg.Token, "token", "", "bearer token HTTP clients must send (default $SWEBOX_MCP_TOKEN, else a generated one printed once to stderr); its client is named "+defaultClient)
	fs.StringVar(&cfg.TokensFile, "tokens", "", "HTTP clients as `FILE` lines \"NAME TOKEN\" ('#' starts a comment), each token at least 32 characters, instead of --token and SWEBOX_MCP_TOKEN; what a client creates is refused to the others")
	fs.StringVar(&cfg.Name, "name", defaultName, "label (swebox.session) of every container this server creates; at start, what a server of this name that is no longer running left is removed (a live one's containers run and are left alone)")
	fs.StringVar(&cfg.LogFile, "log_file", "", "append the per-call log (one JSON line per tool call) to `FILE` instead of stderr")
	fs.StringVar(&cfg.StateDir, "state_dir", "", "directory for workspaces and cached environments (default: a temporary one, removed at exit)")
	fs.Var(&images, "image", "image tools may run, repeatable or comma-separated; the first is the default (default "+agent.DefaultImage+")")
	cfg.Timeout, cfg.IdleExpiry, cfg.EvalTimeout, cfg.ProgressTick = defaultTimeout, defaultIdleExpiry, defaultEvalTimeout, time.Second
	cfg.ClientIdle = defaultIdleExpiry
	fs.Var(secondsFlag(&cfg.Timeout), "timeout", "longest run a tool call may ask for, in `SECONDS` or with a unit (2m), as eval's --timeout; timeout_s is capped to it")
	fs.Var(bytesFlag{&outputLimit}, "output_limit", "bytes of stdout and of stderr kept per call (head and tail)")
	fs.Var(bytesFlag{&artifactCap}, "artifact_limit", "bytes of artifact and file content inlined in one result; larger files come back as resource links")
	fs.Var(bytesFlag{&storeLimit}, "store_limit", "bytes of linked content the server keeps for resources/read (oldest dropped first)")
	fs.Var(bytesFlag{&memory}, "memory", "memory limit of every sandbox")
	fs.IntVar(&cfg.MaxSessions, "max_sessions", defaultMaxSessions, "sessions one client may hold open")
	fs.IntVar(&cfg.MaxSessionsTotal, "max_sessions_total", defaultMaxSessionsTotal, "sessions all clients together may hold open")
	fs.IntVar(&cfg.MaxJobsTotal, "max_jobs_total", defaultMaxJobsTotal, "background jobs all clients together may have running (one client: at most "+strconv.Itoa(maxJobsPerClient)+")")
	fs.IntVar(&cfg.MaxRunning, "max_running", defaultMaxRunning, "tool calls running sandboxes at once; others wait")
	fs.IntVar(&cfg.Pool, "pool", defaultPool, "started sandboxes kept ready for each kind of run_* call and session that is asked for more than once (the same image and limits, no egress), removed after 5 idle minutes; 0: none, every call starts its own")
	fs.Var(secondsFlag(&cfg.IdleExpiry), "idle", "a session unused this long (`SECONDS` or with a unit) is closed; in HTTP mode, an MCP session too")
	fs.Var(secondsFlag(&cfg.ClientIdle), "client_idle", "a client of protocol 2026-07-28 (no MCP session) that made no call this long (`SECONDS` or with a unit) and runs no background job loses its sessions, task sessions and jobs")
	fs.Var(&egress, "egress_allow", "hosts a session may ask to reach (session_create egress), repeatable or comma-separated; default none: no network at all")
	fs.Var(&fetchAllow, "fetch_allow", "hosts (`HOST` or HOST:PORT) whose file URLs the server fetches even at a loopback or private address, e.g. an internal file server, repeatable or comma-separated; default none: public addresses only")
	fs.Var(bytesFlag{&fetchLimit}, "fetch_limit", "bytes the server fetches for one file URL")
	fs.StringVar(&cfg.WheelDir, "wheel_dir", "", "host directory of wheels that requirements install from, offline (default: none; requirements are refused unless --pip_index is set)")
	fs.StringVar(&cfg.PipIndex, "pip_index", "", "package index `URL` requirements install from; only the install step reaches it and --pip_host")
	fs.Var(&pipHosts, "pip_host", "further hosts the install step may reach with --pip_index, e.g. files.pythonhosted.org")
	fs.Var(&datasets, "dataset", "SWE-bench dataset `FILE` (JSON or JSONL) for swebench_evaluate and swebench_grade_log, repeatable; its name is the file's base name without extension")
	fs.Var(&repos, "repos", "directory of local repository sources (owner__name.git) for swebench_evaluate, repeatable")
	fs.StringVar(&cfg.ImageMap, "image_map", "", "workspace mode for the swebench_task_* tools: JSON `FILE` mapping owner/name or owner/name:version to an image, as the eval command's --image_map")
	fs.StringVar(&cfg.Namespace, "namespace", "", "prebuilt mode for the swebench_task_* tools: official instance images <NS>/sweb.eval.x86_64.<id>:<tag>, as the eval command's --namespace ('none' or 'null', as eval: the images named as upstream builds them locally, sweb.eval.x86_64.<id>:<tag>, which eval images build makes; with --image_map, workspace mode)")
	fs.StringVar(&cfg.ImageTag, "instance_image_tag", "", "prebuilt mode for the swebench_task_* tools: tag of the instance images, as the eval command's --instance_image_tag")
	fs.Var(secondsFlag(&cfg.EvalTimeout), "eval_timeout", "longest a swebench_evaluate eval script may run (`SECONDS` or with a unit)")
	fs.Var(&instanceIDs, "instance_ids", "the instances the swebench_task_* tools offer, comma-separated, repeatable (default: every row of each --dataset)")
	fs.BoolVar(&cfg.TestFeedback, "test_feedback", false, "tell clients the hidden tests: test names, report.json and test output in swebench_task_submit, swebench_evaluate and swebench_grade_log results, as for training (default false: the verdict and the counts only, as for an evaluation)")
	fs.BoolVar(&cfg.Strict, "strict", false, "strict grading for swebench_evaluate, swebench_grade_log and task submissions, as eval --strict: the official verdicts minus every one a strict rule refuses, each reason in report.json (see package swebench/strict)")
	fs.IntVar(&cfg.MaxSubmissions, "max_submissions", 0, "swebench_task_submit calls one task session may make, resets included; 0: no limit")
	fs.BoolVar(&cfg.NoTaskSpare, "no_task_spare", false, "a task session, once reset, keeps no sandbox started ahead for its next swebench_task_reset (one container per session instead of two; each reset then waits for a sandbox to start)")
	fs.Var(bytesFlag{&readMemory}, "read_memory", "bytes of file content all session_read_file calls together hold at once; others wait (at least --store_limit)")
	fs.Var(secondsFlag(&cfg.ProgressTick), "progress_interval", "how often long calls send progress notifications (`SECONDS` or with a unit)")
	// The cluster's flags, as eval takes them (with `placeholders` for
	// this help).
	engineflags.Register(fs, &cfg.Engine,
		engineflags.Kubeconfig.With("run every sandbox as a Pod on the Kubernetes cluster this kubeconfig `FILE` describes, instead of on Docker; the swebench_* tools work there, run_*, session_create and --pool do not (a build with -tags "+engineflags.Tag+" only: "+kubeBuildCommand+")"),
		engineflags.KubeNamespace.With("with --kubeconfig: the namespace `NS` the pods run in (it must exist)"),
		engineflags.KubeNodeGrace.With("with --kubeconfig: the cluster's node-monitor-grace-period (kube-controller-manager --node-monitor-grace-period), which loss detection waits for before it calls a silent node's pods lost, in `SECONDS` or with a unit; default 50, the controller's default"),
		engineflags.KubeImageAffinity,
		engineflags.UnenforcedLimits)
	if err := fs.Parse(underscoreNames(fs, args)); err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg.Images, cfg.EgressAllow, cfg.Datasets, cfg.Repos, cfg.PipHosts, cfg.FetchAllow = images, egress, datasets, repos, pipHosts, fetchAllow
	cfg.FetchLimit = fetchLimit
	cfg.InstanceIDs, cfg.ReadMemory = instanceIDs, readMemory
	if len(cfg.Images) == 0 {
		cfg.Images = []string{agent.DefaultImage}
	}
	cfg.OutputLimit, cfg.ArtifactCap, cfg.StoreLimit, cfg.Memory = int(outputLimit), artifactCap, storeLimit, memory
	if cfg.TokensFile != "" && cfg.Token != "" {
		return cfg, fmt.Errorf("%w: give --token or --tokens, not both", errUsage)
	}
	if cfg.Token == "" && cfg.TokensFile == "" {
		cfg.Token = getenv("SWEBOX_MCP_TOKEN")
	}
	if cfg.TokensFile != "" {
		clients, err := readTokens(cfg.TokensFile)
		if err != nil {
			return cfg, fmt.Errorf("%w: %w", errUsage, err)
		}
		cfg.Clients = clients
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := cfg.validateKube(set); err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
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
		return errors.New("--output_limit must be at least 1KiB")
	case c.ArtifactCap < 0 || c.StoreLimit < 0:
		return errors.New("--artifact_limit and --store_limit must not be negative")
	case c.Memory < 64<<20:
		return errors.New("--memory must be at least 64MiB")
	case c.MaxSubmissions < 0:
		return errors.New("--max_submissions must not be negative")
	case c.ReadMemory < c.StoreLimit:
		return errors.New("--read_memory must be at least --store_limit, the largest file one read holds")
	case c.MaxSessions < 0 || c.MaxSessionsTotal < 0:
		return errors.New("--max_sessions and --max_sessions_total must not be negative")
	case c.MaxJobsTotal < 1:
		return errors.New("--max_jobs_total must be at least 1")
	case c.MaxRunning < 1:
		return errors.New("--max_running must be at least 1")
	case c.FetchLimit <= 0:
		return errors.New("--fetch_limit must be positive")
	case c.Pool < 0 || c.Pool > 256:
		return errors.New("--pool must be 0 to 256")
	case c.IdleExpiry <= 0 || c.ClientIdle <= 0:
		return errors.New("--idle and --client_idle must be positive")
	case c.EvalTimeout <= 0 || c.ProgressTick <= 0:
		return errors.New("--eval_timeout and --progress_interval must be positive")
	case c.Name == "" || strings.ContainsAny(c.Name, " =,"):
		return errors.New("--name must be a non-empty label value without spaces, '=' or ','")
	case c.Token != "" && len(c.Token) < minTokenLen:
		return fmt.Errorf("the bearer token (--token or SWEBOX_MCP_TOKEN) has %d characters; one shorter than %d can be guessed: make one with `openssl rand -hex 32`, or leave both unset for a generated one", len(c.Token), minTokenLen)
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

// kubeBuildCommand builds the server with its Kubernetes backend.
const kubeBuildCommand = "go build -tags " + engineflags.Tag + " ./examples/mcp"

// validateKube checks the --kube_* flags against --kubeconfig, and
// --kubeconfig against the build and the flags whose features need the
// server's host: a pod's node shares no directory and no unix socket with
// it. set holds the flags given on the command line. The pool is turned
// off on a cluster, where only the agent's runs would take from it.
func (c *config) validateKube(set map[string]bool) error {
	if err := c.Engine.Check(set); err != nil {
		return err
	}
	switch {
	case c.Kubeconfig == "":
		return nil
	case set["pool"] && c.Pool > 0:
		return errors.New("--pool with --kubeconfig: the pool serves run_* calls and sessions, which a server on Kubernetes does not offer (their workspace is a directory of this machine); leave --pool out")
	case len(c.EgressAllow) > 0:
		return errors.New("--egress_allow with --kubeconfig: egress goes through a unix socket of this machine, which a pod cannot reach; tasks on Kubernetes have no network")
	case c.WheelDir != "" || c.PipIndex != "" || len(c.PipHosts) > 0:
		return errors.New("--wheel_dir, --pip_index and --pip_host with --kubeconfig: requirements are installed for run_* calls and sessions, which a server on Kubernetes does not offer")
	}
	if err := c.Engine.CheckBuilt("the server", kubeBuildCommand); err != nil {
		return err
	}
	c.Pool = 0
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
