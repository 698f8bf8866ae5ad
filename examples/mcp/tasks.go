package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/task"
)

// taskEnvs are the SWE-bench task environments of every client: the tasks
// of each dataset (prepared on first use) and the open environments, by
// session id. An environment's session id works with session_exec,
// session_read_file and session_write_file.
type taskEnvs struct {
	cfg    config
	client *sandbox.Client
	evals  *evaluator

	mu    sync.Mutex
	tasks map[string]*task.Tasks // by dataset name
	byID  map[string]*taskEntry
}

type taskEntry struct {
	id, owner, dataset string
	instanceID         string
	hosts              []string // the egress asked for
	created            time.Time
	// env is nil while the environment starts: the entry is reserved
	// first, so that concurrent starts count against the caps.
	env    *task.Env
	egress *taskEgress // nil: no network
}

func newTaskEnvs(cfg config, client *sandbox.Client, evals *evaluator) *taskEnvs {
	return &taskEnvs{cfg: cfg, client: client, evals: evals, tasks: map[string]*task.Tasks{}, byID: map[string]*taskEntry{}}
}

// evalConfig is the evaluator configuration of dataset name's tasks: the
// mode swebench_evaluate, eval and the library take by default (official
// images for the repositories the harness tables know, the others checked
// out at base_commit in the server's image), unless the flags choose:
// --repos and --image_map workspace mode, --namespace and
// --instance_image_tag the official images.
func evalConfig(cfg config, evals *evaluator, client *sandbox.Client, name string) swebench.Config {
	ec := swebench.Config{
		Dataset: evals.datasets[name], InstanceIDs: cfg.InstanceIDs, Timeout: cfg.EvalTimeout,
		ImageMapFile: cfg.ImageMap, Namespace: cfg.Namespace, ImageTag: cfg.ImageTag,
		Sandboxes: []*sandbox.Client{client}, Limits: sandbox.Limits{Memory: cfg.Memory},
		GradingMode: evals.grading,
	}
	// An empty --namespace is the flag's default (not given), so only
	// "none" and "null" are eval's --namespace none here.
	none := cfg.Namespace != "" && swebench.IsNoNamespace(cfg.Namespace)
	prebuilt := cfg.Namespace != "" && !none || cfg.ImageTag != ""
	switch {
	case none && cfg.ImageMap == "":
		// As eval's --namespace none: the images named as upstream
		// builds them locally, sweb.eval.x86_64.<id>:<tag> (eval images
		// build makes them); with --image_map, workspace mode.
		ec.Namespace, ec.Mode = swebench.NoNamespace, harness.ModePrebuilt
	case none:
		ec.Namespace = swebench.NoNamespace
		ec.Repos, ec.Image = evals.repos, cfg.Images[0]
	case !prebuilt && (evals.repos != nil || cfg.ImageMap != ""):
		ec.Repos, ec.Image = evals.repos, cfg.Images[0]
	}
	return ec
}

// prepare prepares the tasks of every dataset when the server starts, so
// that a configuration they cannot run with is reported then, as an error
// wrapping errUsage, not at the first swebench_task_list. Other failures
// (an image the engine lacks and cannot pull) go to warn, and the tasks
// are prepared again on first use: the server's other tools do not need
// them.
func (te *taskEnvs) prepare(ctx context.Context, warn func(error)) error {
	for _, name := range te.evals.names {
		_, err := te.of(ctx, name)
		switch {
		case err == nil:
		case errors.Is(err, swebench.ErrConfig) || errors.Is(err, dataset.ErrUnknownIDs):
			return fmt.Errorf("%w: the swebench_task_* tools: %w%s", errUsage, err, taskFlagHint(err))
		default:
			warn(fmt.Errorf("the swebench_task_* tools: %w (tried again at first use)", err))
		}
	}
	return nil
}

// taskFlagHint names the flags that fix a configuration error.
func taskFlagHint(err error) string {
	var wie *swebench.WorkspaceImageError
	switch {
	case errors.As(err, &wie):
		return "; leave out --repos to run them in their official images, or name an image for each in --image_map"
	case errors.Is(err, dataset.ErrUnknownIDs):
		return "; --instance_ids names only rows of the datasets"
	case errors.Is(err, swebench.ErrConfig):
		return "; see --repos, --image_map, --namespace and --instance_image_tag"
	}
	return ""
}

// of returns the tasks of dataset name, preparing them on first use with
// the evaluator's flags.
func (te *taskEnvs) of(ctx context.Context, name string) (*task.Tasks, error) {
	te.mu.Lock()
	defer te.mu.Unlock()
	if t, ok := te.tasks[name]; ok {
		return t, nil
	}
	dir, err := os.MkdirTemp(te.evals.workDir, "tasks-")
	if err != nil {
		return nil, err
	}
	feedback := task.FeedbackVerdict
	if te.cfg.TestFeedback {
		feedback = task.FeedbackFull
	}
	t, err := task.New(ctx, task.Config{Eval: evalConfig(te.cfg, te.evals, te.client, name), Dir: dir,
		Feedback: feedback, MaxSubmissions: te.cfg.MaxSubmissions, NoSpare: te.cfg.NoTaskSpare})
	if err != nil {
		return nil, fmt.Errorf("prepare the tasks of %s: %w", name, err)
	}
	te.tasks[name] = t
	return t, nil
}

// get returns owner's environment id, nil when owner has none by that id.
func (te *taskEnvs) get(owner, id string) *taskEntry {
	te.mu.Lock()
	defer te.mu.Unlock()
	if e, ok := te.byID[id]; ok && e.owner == owner && e.env != nil {
		return e
	}
	return nil
}

// ofOwner lists owner's started environments by id.
func (te *taskEnvs) ofOwner(owner string) []*taskEntry {
	te.mu.Lock()
	defer te.mu.Unlock()
	var out []*taskEntry
	for _, e := range te.byID {
		if e.owner == owner && e.env != nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// count is how many environments owner holds and all owners hold, those
// starting included.
func (te *taskEnvs) count(owner string) (mine, total int) {
	te.mu.Lock()
	defer te.mu.Unlock()
	for _, e := range te.byID {
		if e.owner == owner {
			mine++
		}
	}
	return mine, len(te.byID)
}

// ready hands the started env to its reserved entry; false when the entry
// was dropped meanwhile (its client went), and the env is then the
// caller's to close.
func (te *taskEnvs) ready(e *taskEntry, env *task.Env) bool {
	te.mu.Lock()
	defer te.mu.Unlock()
	if te.byID[e.id] != e {
		return false
	}
	e.env = env
	return true
}

// drop closes the environments the filter picks.
func (te *taskEnvs) drop(pick func(*taskEntry) bool) error {
	te.mu.Lock()
	var envs []*taskEntry
	for id, e := range te.byID {
		if pick(e) {
			envs = append(envs, e)
			delete(te.byID, id)
		}
	}
	te.mu.Unlock()
	var errs []error
	for _, e := range envs {
		if e.env != nil { // a starting one is closed by its start
			errs = append(errs, e.env.Close(), e.egress.Close())
		}
	}
	return errors.Join(errs...)
}

// Close closes every environment and the tasks.
func (te *taskEnvs) Close() error {
	err := te.drop(func(*taskEntry) bool { return true })
	te.mu.Lock()
	defer te.mu.Unlock()
	for _, t := range te.tasks {
		err = errors.Join(err, t.Close())
	}
	return err
}

// taskPath resolves a path an agent gave for a task environment: absolute,
// or relative to /testbed.
func taskPath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", toolErrorf("path %q: give a file path, absolute or relative to /testbed", p)
	}
	if !path.IsAbs(p) {
		p = path.Join("/testbed", p)
	}
	return path.Clean(p), nil
}

type taskListIn struct {
	Dataset string `json:"dataset,omitempty" jsonschema:"which of the server's datasets; needed only when it has several"`
}

type taskInfo struct {
	InstanceID string `json:"instance_id"`
	Repo       string `json:"repo"`
}

type taskListOut struct {
	Dataset string     `json:"dataset"`
	Tasks   []taskInfo `json:"tasks"`
}

type taskStartIn struct {
	InstanceID string   `json:"instance_id" jsonschema:"the SWE-bench instance to work on (swebench_task_list lists them)"`
	Dataset    string   `json:"dataset,omitempty" jsonschema:"which of the server's datasets holds the instance; needed only when it has several"`
	Egress     []string `json:"egress,omitempty" jsonschema:"hosts the task's commands may reach through a proxy, each one the server allows (its --egress_allow list); default: no network at all"`
}

type taskStartOut struct {
	Session          string   `json:"session" jsonschema:"the session id for session_exec, session_read_file, session_write_file and the other swebench_task_* tools"`
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo"`
	BaseCommit       string   `json:"base_commit"`
	Workdir          string   `json:"workdir" jsonschema:"where the repository is: commands run there, relative paths are under it"`
	ProblemStatement string   `json:"problem_statement" jsonschema:"the issue to resolve"`
	Egress           []string `json:"egress,omitempty"`
	StartMS          int64    `json:"start_ms"`
}

type taskDiffOut struct {
	Session string `json:"session"`
	Patch   string `json:"patch" jsonschema:"your change against the base commit, as the model patch that would be graded"`
}

type taskSubmitIn struct {
	Session    string `json:"session" jsonschema:"the task session"`
	Background bool   `json:"background,omitempty" jsonschema:"return a job id at once; job_status shows progress and, at the end, the verdict"`
}

type testResults struct {
	Passed  int      `json:"passed"`
	Total   int      `json:"total"`
	Success []string `json:"success,omitempty" jsonschema:"the tests that pass, when the server tells test names (--test_feedback)"`
	Failure []string `json:"failure,omitempty" jsonschema:"the tests that fail, when the server tells test names (--test_feedback)"`
}

// taskSubmitOut is a graded patch (the shape of swebench_evaluate's too)
// and the task session's account of it.
type taskSubmitOut struct {
	Session string `json:"session"`
	gradedPatch
	PatchBytes int `json:"patch_bytes"`
	// Submissions counts this session's submissions, this one included.
	Submissions    int `json:"submissions"`
	MaxSubmissions int `json:"max_submissions,omitempty" jsonschema:"the most submissions a task session may make; absent: no limit"`
}

type taskResetOut struct {
	Session    string `json:"session"`
	Spare      bool   `json:"spare" jsonschema:"the new sandbox had been started ahead, so the reset did not wait for one"`
	DurationMS int64  `json:"duration_ms"`
}

// useTask checks that c's owner has task session id.
func (s *server) useTask(c *call, id string) (*taskEntry, error) {
	c.session = id
	if e := s.tasks.get(c.owner, id); e != nil {
		return e, nil
	}
	return nil, toolErrorf("no task session %q for this client; swebench_task_start makes one", id)
}

func (s *server) addTaskTools(srv *mcp.Server) {
	addTool[taskListIn, taskListOut](s, srv, &mcp.Tool{
		Name:        "swebench_task_list",
		Description: "List the SWE-bench tasks this server offers: instance ids and repositories. swebench_task_start opens one.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in taskListIn) (*mcp.CallToolResult, error) {
		name, err := s.datasetName(in.Dataset)
		if err != nil {
			return nil, err
		}
		t, err := s.tasks.of(ctx, name)
		if err != nil {
			return nil, err
		}
		out := taskListOut{Dataset: name, Tasks: []taskInfo{}}
		for _, id := range t.IDs() {
			inst, _ := t.Instance(id)
			out.Tasks = append(out.Tasks, taskInfo{InstanceID: id, Repo: inst.Repo})
		}
		res, n := result(out)
		c.bytes = n
		return res, nil
	})

	addTool[taskStartIn, taskStartOut](s, srv, &mcp.Tool{
		Name: "swebench_task_start",
		Description: "Start working on a SWE-bench task: a sandbox with the repository at the task's base commit in /testbed (no network unless the server allows the hosts you list in egress). " +
			"Returns a session id and the problem statement. Work with session_exec (commands run in /testbed), session_read_file and session_write_file (paths absolute or relative to /testbed); " +
			"swebench_task_diff shows your change, swebench_task_submit grades it with the official tests, swebench_task_reset starts over, swebench_task_close ends it.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in taskStartIn) (*mcp.CallToolResult, error) {
		_, name, err := s.evals.instance(in.Dataset, in.InstanceID)
		if err != nil {
			return nil, err
		}
		if err := s.checkEgress(in.Egress); err != nil {
			return nil, err
		}
		t, err := s.tasks.of(ctx, name)
		if err != nil {
			return nil, err
		}
		if _, ok := t.Instance(in.InstanceID); !ok {
			return nil, toolErrorf("instance %q has no task environment on this server (not offered, or no image or test specification for it); swebench_task_list lists those it has", in.InstanceID)
		}
		id := randomID("t")
		c.session = id
		entry := &taskEntry{id: id, owner: c.owner, dataset: name, instanceID: in.InstanceID, hosts: in.Egress, created: time.Now()}
		if err := s.reserve(c.owner, func() { s.tasks.byID[id] = entry }); err != nil {
			return nil, err
		}
		env, eg, err := s.startTask(ctx, t, in)
		if err == nil && !s.tasks.ready(entry, env) {
			err = errors.Join(errors.New("the client went while its task started"), env.Close(), eg.Close())
		}
		if err != nil {
			s.tasks.drop(func(x *taskEntry) bool { return x == entry })
			return nil, err
		}
		entry.egress = eg
		out := taskStartOut{Session: id, InstanceID: in.InstanceID, Repo: env.Instance.Repo, BaseCommit: env.Instance.BaseCommit,
			Workdir: "/testbed", ProblemStatement: env.Instance.ProblemStatement, Egress: in.Egress, StartMS: env.Started.Milliseconds()}
		res, n := result(out)
		c.bytes = n
		return res, nil
	})

	addTool[sessionIn, taskDiffOut](s, srv, &mcp.Tool{
		Name:        "swebench_task_diff",
		Description: "Show your change in a task session as the patch that swebench_task_submit would grade (new files included, ignored files not).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionIn) (*mcp.CallToolResult, error) {
		e, err := s.useTask(c, in.Session)
		if err != nil {
			return nil, err
		}
		patch, err := e.env.Diff(ctx)
		if err != nil {
			return nil, err
		}
		res, n := result(taskDiffOut{Session: in.Session, Patch: patch})
		c.bytes = n
		return res, nil
	})

	returns := "Returns resolved, the outcome and how many FAIL_TO_PASS / PASS_TO_PASS tests pass; the tests themselves stay hidden. "
	if s.cfg.TestFeedback {
		returns = "Returns resolved, the FAIL_TO_PASS / PASS_TO_PASS results, the outcome and the end of the test output. "
	}
	if s.cfg.MaxSubmissions > 0 {
		returns += fmt.Sprintf("A task session may submit %d times, resets included. ", s.cfg.MaxSubmissions)
	}
	addTool[taskSubmitIn, any](s, srv, &mcp.Tool{
		Name: "swebench_task_submit",
		Description: "Grade your change in a task session exactly as the official SWE-bench harness grades a prediction: your diff is applied in a fresh sandbox and the task's tests run. " +
			returns + "The session stays as it is. Takes a while; consider background: true.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in taskSubmitIn) (*mcp.CallToolResult, error) {
		e, err := s.useTask(c, in.Session)
		if err != nil {
			return nil, err
		}
		return s.runTool(ctx, req, c, "swebench_task_submit", in.Background, s.cfg.EvalTimeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			var progress func(swebench.Event)
			if c.stdout != nil {
				progress = func(ev swebench.Event) { fmt.Fprintln(c.stdout, progressLine(ev)) }
			}
			start := time.Now()
			sub, err := e.env.Submit(ctx, progress)
			if errors.Is(err, task.ErrSubmissionLimit) {
				return nil, toolErrorf("this task session has had its %d submissions, the most this server allows", s.cfg.MaxSubmissions)
			}
			if err != nil {
				return nil, err
			}
			out, err := submitOut(in.Session, sub, s.cfg.TestFeedback)
			if err != nil {
				return nil, err
			}
			// The result carries what the client may see; the logs go.
			if err := sub.Discard(); err != nil {
				s.calls.Warn("remove the logs of a submission", "session", in.Session, "error", err.Error())
			}
			out.DurationMS = time.Since(start).Milliseconds()
			out.Submissions, out.MaxSubmissions = e.env.Submissions(), s.cfg.MaxSubmissions
			res, n := result(out)
			c.bytes = n
			return res, nil
		})
	})

	addTool[sessionIn, taskResetOut](s, srv, &mcp.Tool{
		Name:        "swebench_task_reset",
		Description: "Start a task session over in a new sandbox made as swebench_task_start made the first: nothing of the work so far (files, git objects and history, /tmp, processes) carries over.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionIn) (*mcp.CallToolResult, error) {
		e, err := s.useTask(c, in.Session)
		if err != nil {
			return nil, err
		}
		r, err := e.env.Reset(ctx)
		if err != nil {
			s.tasks.drop(func(x *taskEntry) bool { return x == e })
			return nil, err
		}
		res, n := result(taskResetOut{Session: in.Session, Spare: r.Spare, DurationMS: r.Duration.Milliseconds()})
		c.bytes = n
		return res, nil
	})

	addTool[sessionIn, sessionCloseOut](s, srv, &mcp.Tool{
		Name:        "swebench_task_close",
		Description: "End a task session: its sandbox and files are deleted.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionIn) (*mcp.CallToolResult, error) {
		e, err := s.useTask(c, in.Session)
		if err != nil {
			return nil, err
		}
		if err := s.tasks.drop(func(x *taskEntry) bool { return x == e }); err != nil {
			return nil, fmt.Errorf("close task session: %w", err)
		}
		res, n := result(sessionCloseOut{Session: in.Session, Closed: true})
		c.bytes = n
		return res, nil
	})
}

// startTask starts the environment of in.InstanceID with the egress asked
// for, within the --max_running places.
func (s *server) startTask(ctx context.Context, t *task.Tasks, in taskStartIn) (*task.Env, *taskEgress, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	eg, err := s.newTaskEgress(in.Egress)
	if err != nil {
		return nil, nil, err
	}
	env, err := t.StartWith(ctx, task.StartRequest{ID: in.InstanceID, Spec: eg.spec()})
	if err != nil {
		return nil, nil, errors.Join(err, eg.Close())
	}
	return env, eg, nil
}

// datasetName picks one of the server's datasets.
func (s *server) datasetName(name string) (string, error) {
	names := s.evals.names
	switch {
	case len(names) == 0:
		return "", toolErrorf("this server was started without a SWE-bench dataset (--dataset); it has no tasks")
	case name == "" && len(names) > 1:
		return "", toolErrorf("this server has several datasets; name one: %s", strings.Join(names, ", "))
	case name == "":
		return names[0], nil
	}
	if _, ok := s.evals.datasets[name]; !ok {
		return "", toolErrorf("no dataset %q on this server; it has: %s", name, strings.Join(names, ", "))
	}
	return name, nil
}

// submitOut is the result of a submission; with feedback the test names,
// report.json and the test output's tail too. Without, the Submission has
// none of them already (task.FeedbackVerdict), and they are left out here
// as well.
func submitOut(session string, sub *task.Submission, feedback bool) (taskSubmitOut, error) {
	g, err := newGradedPatch(sub.Result, sub.Report, feedback)
	if err != nil {
		return taskSubmitOut{}, err
	}
	return taskSubmitOut{Session: session, gradedPatch: g, PatchBytes: len(sub.Patch)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	sort.Strings(s)
	return s
}

// taskExec runs session_exec in a task environment, in /testbed.
func (s *server) taskExec(ctx context.Context, req *mcp.CallToolRequest, c *call, e *taskEntry, in sessionExecIn) (*mcp.CallToolResult, error) {
	argv := []string{"sh", "-c", in.Command}
	if in.Code != "" {
		argv = []string{"python3", "-c", in.Code}
	}
	argv = e.egress.command(argv)
	timeout := s.timeout(in.TimeoutS)
	return s.runTool(ctx, req, c, "session_exec", in.Background, timeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
		release, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		xr := sandbox.ExecRequest{Cmd: argv, Timeout: timeout, OutputLimit: s.cfg.OutputLimit}
		if c.stdout != nil {
			xr.Stdout, xr.Stderr = c.stdout, c.stderr
		}
		r, err := e.env.Exec(ctx, xr)
		if err != nil {
			return nil, err
		}
		out := runOutput{
			Status: "ok", ExitCode: r.ExitCode, Stdout: r.Stdout.String(), Stderr: r.Stderr.String(),
			StdoutTruncated: r.Stdout.Truncated, StderrTruncated: r.Stderr.Truncated,
			DurationMS: r.Duration.Milliseconds(), TimeoutS: timeout.Seconds(),
		}
		switch {
		case r.TimedOut:
			out.Status = "timeout"
		case r.OOMKilled:
			out.Status = "oom"
		case r.Signal != 0:
			out.Status = "signal"
		case r.ExitCode != 0:
			out.Status = "exit"
		}
		return s.runOutputResult(c.owner, c, runResult{out: out}), nil
	})
}

// taskReadFile reads a file of a task environment for session_read_file:
// its size first, then, with that much of --read_memory held (the
// returned func gives it back), its content.
func (s *server) taskReadFile(ctx context.Context, c *call, e *taskEntry, p string) ([]byte, string, func(), error) {
	p, err := taskPath(p)
	if err != nil {
		return nil, "", nil, err
	}
	r, err := e.env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"stat", "-L", "-c", "%s", "--", p}, OutputLimit: 64, Timeout: s.cfg.Timeout})
	if err != nil {
		return nil, "", nil, err
	}
	if r.ExitCode != 0 {
		return nil, "", nil, toolErrorf("cannot read %s: %s", p, strings.TrimSpace(r.Stderr.String()))
	}
	size, err := strconv.ParseInt(strings.TrimSpace(r.Stdout.String()), 10, 64)
	if err != nil || size < 0 {
		return nil, "", nil, fmt.Errorf("size of %s: %q", p, r.Stdout.String())
	}
	if size > s.cfg.StoreLimit {
		return nil, "", nil, toolErrorf("%s is larger than this server passes on (%d bytes); process it in the session instead", p, s.cfg.StoreLimit)
	}
	release, err := s.holdRead(ctx, size)
	if err != nil {
		return nil, "", nil, err
	}
	r, err = e.env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"cat", "--", p}, OutputLimit: max(int(size), 1), Timeout: s.cfg.Timeout})
	switch {
	case err != nil:
	case r.ExitCode != 0:
		err = toolErrorf("cannot read %s: %s", p, strings.TrimSpace(r.Stderr.String()))
	case r.Stdout.Truncated:
		err = toolErrorf("%s grew while it was read; read it again", p)
	}
	if err != nil {
		release()
		return nil, "", nil, err
	}
	return r.Stdout.Bytes(), p, release, nil
}

// taskWriteFile writes a file into a task environment for
// session_write_file.
func (s *server) taskWriteFile(ctx context.Context, c *call, e *taskEntry, f fileArg) (string, int, error) {
	p, err := taskPath(f.Path)
	if err != nil {
		return "", 0, err
	}
	f.Path = "file" // inputFile checks workspace paths; this one is resolved above
	in, err := s.inputFile(c.owner, f)
	if err != nil {
		return "", 0, err
	}
	if in.URL != "" {
		return "", 0, toolErrorf("a task session takes content, content_base64 or uri, not url: it has no network, and the repository is what it works on")
	}
	data := in.Data
	r, err := e.env.Exec(ctx, sandbox.ExecRequest{
		Cmd:   []string{"sh", "-c", `mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`, "write", p},
		Stdin: bytes.NewReader(data), Timeout: s.cfg.Timeout,
	})
	if err != nil {
		return "", 0, err
	}
	if r.ExitCode != 0 {
		return "", 0, toolErrorf("cannot write %s: %s", p, strings.TrimSpace(r.Stderr.String()))
	}
	return p, len(data), nil
}
