package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/traceback"
	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/sandbox"
)

// backend is the server's one use of package agent: every sandbox a tool
// runs goes through it, with the server's limits applied here and nowhere
// else.
type backend struct {
	cfg    config
	client *sandbox.Client
	mgr    *agent.Manager
}

// maxArtifacts is the most files one result lists.
const maxArtifacts = 32

// newBackend connects to the engine (the Docker engine, or the cluster of
// --kubeconfig), removes what a server of the same name that is no longer
// running left behind (a crash or a kill: its sandboxes stopped when it
// died, see sandbox.Client.Create; on a cluster its pods completed when
// their lease ended) and starts the agent manager. A live server's
// sandboxes run, and are left alone.
func newBackend(ctx context.Context, cfg config, log *slog.Logger) (*backend, error) {
	sopts := append([]sandbox.Option{sandbox.WithSession(cfg.Name), sandbox.WithLogger(log)}, cfg.Engine.DockerOptions()...)
	engine := "the Docker engine"
	if cfg.Kubeconfig != "" {
		kopts, err := cfg.Engine.Options()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
		sopts = append(sopts, kopts...)
		engine = "the Kubernetes cluster"
	}
	if cfg.Pool > 0 {
		// Its sandboxes carry the server's name too, and stop when the
		// server dies; the next start of a server of that name removes
		// those a killed one left.
		sopts = append(sopts, sandbox.WithPool(sandbox.PoolOptions{Size: cfg.Pool}))
	}
	c, err := sandbox.New(sopts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", engine, err)
	}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect to %s: %w", engine, err)
	}
	if _, err := c.Prune(ctx, sandbox.PruneRequest{Session: cfg.Name, Stopped: true}); err != nil {
		c.Close()
		return nil, fmt.Errorf("remove sandboxes left by an earlier server: %w", err)
	}
	opts := []agent.Option{
		agent.WithImage(cfg.Images[0]),
		agent.WithIdleTimeout(cfg.IdleExpiry),
		agent.WithLogger(log),
		agent.WithFetchLimit(cfg.FetchLimit),
	}
	if len(cfg.FetchAllow) > 0 {
		opts = append(opts, agent.WithHTTPClient(fetchClient(cfg.FetchAllow)))
	}
	if cfg.StateDir != "" {
		opts = append(opts, agent.WithStateDir(cfg.StateDir))
	}
	m, err := agent.New(c, opts...)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("start the sandbox manager: %w", err)
	}
	return &backend{cfg: cfg, client: c, mgr: m}, nil
}

// fetchClient fetches the URLs of the hosts in allow (a host, or host:port)
// wherever they resolve to, and every other URL as egress.PublicClient does,
// never at a loopback, private or metadata address. Each request of a
// redirect chain is routed by its own host.
func fetchClient(allow []string) *http.Client {
	public := egress.PublicClient()
	hosts := map[string]bool{}
	for _, h := range allow {
		hosts[strings.ToLower(h)] = true
	}
	direct := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 15 * time.Second}).DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{Timeout: public.Timeout, Transport: hostRouter{allow: hosts, direct: direct, public: public.Transport}}
}

type hostRouter struct {
	allow          map[string]bool
	direct, public http.RoundTripper
}

func (r hostRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.allow[strings.ToLower(req.URL.Host)] || r.allow[strings.ToLower(req.URL.Hostname())] {
		return r.direct.RoundTrip(req)
	}
	return r.public.RoundTrip(req)
}

// Close ends every session (removing its sandboxes), removes what stopped
// under the server's name and then the pool's sandboxes; another live
// server's sandboxes of the same name are left alone.
func (b *backend) Close() error {
	err := b.mgr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, perr := b.client.Prune(ctx, sandbox.PruneRequest{Session: b.cfg.Name, Stopped: true})
	return errors.Join(err, perr, b.client.Close())
}

// inputFile is a file a tool writes into the sandbox: content, or a URL the
// server fetches (never a host path).
type inputFile struct {
	Name string
	Data []byte
	URL  string
}

// runSpec is what a one-shot run asks for, already checked against the
// server's limits.
type runSpec struct {
	Image        string
	Requirements []string
	Files        []inputFile
	Timeout      time.Duration
	// Stdout and Stderr receive the output live (background jobs).
	Stdout, Stderr io.Writer
}

// artifactData is one artifact with its content (nil past the content cap).
type artifactData struct {
	info artifactInfo
	data []byte
}

// runResult is a run's output and its artifacts' content.
type runResult struct {
	out       runOutput
	artifacts []artifactData
}

func (b *backend) limits() sandbox.Limits { return sandbox.Limits{Memory: b.cfg.Memory} }

func (b *backend) artifactOptions() agent.ArtifactOptions {
	return agent.ArtifactOptions{MaxFiles: maxArtifacts, MaxBytes: b.cfg.ArtifactCap + min(b.cfg.StoreLimit, 32<<20)}
}

func (b *backend) requirements(pkgs []string) (agent.Requirements, error) {
	if len(pkgs) == 0 {
		return agent.Requirements{}, nil
	}
	r := agent.Requirements{Packages: pkgs}
	switch {
	case b.cfg.WheelDir != "":
		r.WheelDir = b.cfg.WheelDir
	case b.cfg.PipIndex != "":
		u, err := url.Parse(b.cfg.PipIndex)
		if err != nil {
			return r, fmt.Errorf("--pip_index: %w", err)
		}
		r.IndexURL = b.cfg.PipIndex
		r.Egress = egress.Allowlist{Hosts: append([]string{u.Hostname()}, b.cfg.PipHosts...)}
	default:
		return r, toolErrorf("this server installs no packages (it was started without --wheel_dir or --pip_index); use the standard library or the packages the image has")
	}
	return r, nil
}

func agentFiles(files []inputFile) []agent.File {
	out := make([]agent.File, 0, len(files))
	for _, f := range files {
		// Data, never HostPath: nothing a client sends names a host file.
		out = append(out, agent.File{Name: f.Name, Data: f.Data, URL: f.URL})
	}
	return out
}

// errOnCluster refuses the agent's runs and sessions on a cluster: their
// workspace is a directory of the server's host, mounted into the sandbox
// and read back after each command, and a pod's node shares none.
var errOnCluster = toolErrorf("this server runs its sandboxes on a Kubernetes cluster, where run_python, run_shell, run_tests and session_create are not offered " +
	"(their workspace is a directory of the server's machine, which the cluster's nodes do not share); the swebench_* tools work here, or use a server on Docker")

// agentRuns refuses the agent's runs and sessions on a cluster; the tools
// call it first, so that a background call is refused before it starts.
func (b *backend) agentRuns() error {
	if b.cfg.Kubeconfig != "" {
		return errOnCluster
	}
	return nil
}

func (b *backend) runOptions(spec runSpec) (agent.RunOptions, error) {
	reqs, err := b.requirements(spec.Requirements)
	if err != nil {
		return agent.RunOptions{}, err
	}
	return agent.RunOptions{
		SandboxOptions: agent.SandboxOptions{
			Image: spec.Image, Files: agentFiles(spec.Files), Requirements: reqs, Limits: b.limits(),
		},
		Timeout: spec.Timeout, OutputLimit: b.cfg.OutputLimit,
		Artifacts: b.artifactOptions(), Stdout: spec.Stdout, Stderr: spec.Stderr,
	}, nil
}

func (b *backend) runPython(ctx context.Context, code string, spec runSpec) (runResult, error) {
	opts, err := b.runOptions(spec)
	if err != nil {
		return runResult{}, err
	}
	res, err := b.mgr.RunPython(ctx, code, opts)
	if err != nil {
		return runResult{}, agentError(err)
	}
	return convertResult(res), nil
}

func (b *backend) runShell(ctx context.Context, script string, spec runSpec) (runResult, error) {
	opts, err := b.runOptions(spec)
	if err != nil {
		return runResult{}, err
	}
	res, err := b.mgr.RunShell(ctx, script, opts)
	if err != nil {
		return runResult{}, agentError(err)
	}
	return convertResult(res), nil
}

// testCase and testSpec mirror agent.TestCase and agent.TestRequest.
type testCase struct {
	Name          string         `json:"name,omitempty" jsonschema:"identifies the case in results (default: case <index>)"`
	Args          []any          `json:"args,omitempty" jsonschema:"positional arguments of the call"`
	Kwargs        map[string]any `json:"kwargs,omitempty" jsonschema:"keyword arguments of the call"`
	Expected      any            `json:"expected,omitempty" jsonschema:"the value the call must return (compared with ==; a tuple equals a list); a case with no expected, expected_type or expected_error expects None"`
	ExpectedType  string         `json:"expected_type,omitempty" jsonschema:"name of the class the result must be an instance of, e.g. int"`
	ExpectedError string         `json:"expected_error,omitempty" jsonschema:"name of the exception class the call must raise, e.g. ValueError"`
}

func (b *backend) runTests(ctx context.Context, code, function string, cases []testCase, caseTimeout time.Duration, spec runSpec) (testOutput, error) {
	opts, err := b.runOptions(spec)
	if err != nil {
		return testOutput{}, err
	}
	req := agent.TestRequest{Code: code, Function: function, CaseTimeout: caseTimeout}
	for _, c := range cases {
		req.Cases = append(req.Cases, agent.TestCase{Name: c.Name, Args: c.Args, Kwargs: c.Kwargs,
			Expected: c.Expected, ExpectedType: c.ExpectedType, ExpectedError: c.ExpectedError})
	}
	rep, err := b.mgr.RunTests(ctx, req, opts)
	if err != nil {
		return testOutput{}, agentError(err)
	}
	out := testOutput{AllPassed: rep.AllPassed(), Passed: rep.Passed, Failed: rep.Failed,
		ImportError: convertError(rep.ImportError), Feedback: diagnose.TestFeedback(rep), Run: convertResult(rep.Run).out}
	out.Run.Artifacts = nil
	for _, c := range rep.Cases {
		out.Cases = append(out.Cases, caseResult{Name: c.Name, Passed: c.Passed, Output: c.Output, Expected: c.Expected,
			Detail: c.Detail, Stdout: c.Stdout, Stderr: c.Stderr, DurationMS: c.Duration.Milliseconds(),
			TimedOut: c.TimedOut, ErrorType: c.ErrorType})
	}
	return out, nil
}

// sessionSpec is what session_create asks for, checked against the limits.
type sessionSpec struct {
	Image        string
	Requirements []string
	Egress       []string
}

func (b *backend) createSession(ctx context.Context, name string, spec sessionSpec) error {
	reqs, err := b.requirements(spec.Requirements)
	if err != nil {
		return err
	}
	_, err = b.mgr.Create(ctx, name, agent.SessionOptions{
		SandboxOptions: agent.SandboxOptions{
			Image: spec.Image, Requirements: reqs, Egress: egress.Allowlist{Hosts: spec.Egress}, Limits: b.limits(),
		},
		IdleTimeout: b.cfg.IdleExpiry,
	})
	return agentError(err)
}

// session returns the agent session; a reaped one is errSessionGone.
func (b *backend) session(ctx context.Context, name string) (*agent.Session, error) {
	s, err := b.mgr.Get(ctx, name)
	if errors.Is(err, agent.ErrSessionNotFound) {
		return nil, errSessionGone
	}
	return s, err
}

// errSessionGone: the session was closed or expired.
var errSessionGone = errors.New("session gone")

// jobFiles are where a background command's output goes, relative to the
// session's workspace, so that job_status can read it while it runs.
type jobFiles struct{ Stdout, Stderr string }

// sessionExec runs a shell command line or Python code in a session. With
// files set, the program's output goes to them and the result reads them
// back when it ends.
func (b *backend) sessionExec(ctx context.Context, name, command, code string, timeout time.Duration, files *jobFiles) (runResult, error) {
	s, err := b.session(ctx, name)
	if err != nil {
		return runResult{}, err
	}
	opts := agent.ExecOptions{Timeout: timeout, OutputLimit: b.cfg.OutputLimit, Artifacts: b.artifactOptions()}
	var res agent.Result
	switch {
	case files != nil:
		prog := command
		if code != "" {
			opts.Files = []agent.File{{Name: path.Base(files.Stdout) + ".py", Data: []byte(code)}}
			prog = "python3 " + agent.MountsDir + "/" + path.Base(files.Stdout) + ".py"
		}
		script := fmt.Sprintf("mkdir -p %s && exec >%s 2>%s\n%s\n", path.Dir(files.Stdout), files.Stdout, files.Stderr, prog)
		res, err = s.RunShell(ctx, script, opts)
	case code != "":
		res, err = s.RunPython(ctx, code, opts)
	default:
		res, err = s.RunShell(ctx, command, opts)
	}
	if err != nil {
		return runResult{}, agentError(err)
	}
	if files != nil {
		ws := s.Workspace()
		res.Stdout = readCapped(ws, files.Stdout, b.cfg.OutputLimit)
		res.Stderr = readCapped(ws, files.Stderr, b.cfg.OutputLimit)
		if res.Kind == agent.KindExit || res.Kind == agent.KindOK {
			if res.Error = traceback.Parse(res.Stderr.String()); res.Error != nil && res.Kind == agent.KindExit {
				res.Kind = agent.KindException
			}
		}
	}
	return convertResult(res), nil
}

// readCapped reads a file of the workspace as an Output capped like the
// sandbox's: head and tail, read where they lie, so a huge (or sparse)
// file the sandbox made costs the server at most limit bytes.
func readCapped(workspace, name string, limit int) sandbox.Output {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return sandbox.Output{}
	}
	defer root.Close()
	f, fi, err := hostfs.Open(root, strings.TrimPrefix(name, "/"))
	if err != nil {
		return sandbox.Output{}
	}
	defer f.Close()
	o, _ := sandbox.ReadOutput(f, fi.Size(), limit)
	return o
}

func (b *backend) addFile(ctx context.Context, name string, f inputFile) error {
	s, err := b.session(ctx, name)
	if err != nil {
		return err
	}
	return agentError(s.AddFiles(ctx, agentFiles([]inputFile{f})...))
}

// workspace is the host directory of a session's /workspace.
func (b *backend) workspace(ctx context.Context, name string) (string, error) {
	s, err := b.session(ctx, name)
	if err != nil {
		return "", err
	}
	return s.Workspace(), nil
}

func (b *backend) closeSession(ctx context.Context, name string) error {
	err := b.mgr.Remove(ctx, name)
	if errors.Is(err, agent.ErrSessionNotFound) {
		return nil
	}
	return err
}

// sessionState is what session_list shows of a live session.
type sessionState struct {
	Created, LastUsed time.Time
	Runs, Active      int
	Requirements      []string
}

// liveSessions describes the sessions the manager still holds, by name.
func (b *backend) liveSessions(ctx context.Context) (map[string]sessionState, error) {
	infos, err := b.mgr.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]sessionState, len(infos))
	for _, i := range infos {
		out[i.Name] = sessionState{Created: i.Created, LastUsed: i.LastUsed, Runs: i.Runs, Active: i.Active, Requirements: i.Requirements}
	}
	return out, nil
}

// agentError turns the errors a model can fix into tool errors; the rest
// stay infrastructure failures.
func agentError(err error) error {
	var ie *agent.InstallError
	var oe *agent.OptionError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		out := ""
		if ie.Install != nil {
			out = tail(ie.Install.Stdout.String()+ie.Install.Stderr.String(), 4000)
		}
		return toolErrorf("the requirements failed to install:\n%s", out)
	case errors.As(err, &oe):
		return toolErrorf("invalid %s: %s", oe.Field, oe.Reason)
	case errors.Is(err, agent.ErrFetch):
		return toolErrorf("a file's URL could not be fetched: %v", err)
	case errors.Is(err, agent.ErrSessionNotFound):
		return errSessionGone
	case errors.Is(err, agent.ErrEgressUnsupported):
		return toolErrorf("this server's sandbox runtime cannot grant network access")
	}
	return err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]" + s[len(s)-n:]
}

func convertError(e *traceback.Exception) *pyError {
	if e == nil {
		return nil
	}
	p := &pyError{Type: e.Type, Message: e.Message, Traceback: e.Traceback}
	if f, ok := e.UserFrame(agent.ScriptDir); ok {
		p.File, p.Line = f.File, f.Line
	}
	return p
}

func convertResult(r agent.Result) runResult {
	out := runOutput{
		Status: r.Kind.String(), ExitCode: r.ExitCode,
		Stdout: r.Stdout.String(), Stderr: r.Stderr.String(),
		StdoutTruncated: r.Stdout.Truncated, StderrTruncated: r.Stderr.Truncated,
		DurationMS: r.Duration.Milliseconds(), TimeoutS: r.Timeout.Seconds(),
		PeakMemoryBytes: r.PeakMemory, MemoryLimit: r.MemoryLimit,
		Error: convertError(r.Error), Feedback: diagnose.Feedback(r),
		ArtifactsDropped: r.ArtifactsDropped,
	}
	if i := r.Install; i != nil {
		out.Install = &installInfo{OK: i.OK(), Cached: i.Cached, Packages: i.Packages}
		if !i.OK() {
			out.Install.Output = tail(i.Stdout.String()+i.Stderr.String(), 4000)
		}
	}
	res := runResult{out: out}
	for _, a := range r.Artifacts {
		res.artifacts = append(res.artifacts, artifactData{
			info: artifactInfo{Name: a.Name, Path: a.Path, Size: a.Size, MIMEType: a.MIME},
			data: a.Data,
		})
	}
	return res
}

// readWorkspaceFile reads name (slash-separated, relative) inside the
// workspace directory: a regular file of at most limit bytes
// (hostfs.ErrTooLarge otherwise), never through a link or from a FIFO.
func readWorkspaceFile(workspace, name string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return hostfs.ReadFile(root, strings.TrimPrefix(name, "/"), limit)
}

// workspaceFileSize is the size of the regular file name in the workspace.
func workspaceFileSize(workspace, name string) (int64, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	f, fi, err := hostfs.Open(root, strings.TrimPrefix(name, "/"))
	if err != nil {
		return 0, err
	}
	f.Close()
	return fi.Size(), nil
}
