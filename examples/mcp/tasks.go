package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
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
	env                *task.Env
	egress             *taskEgress // nil: no network
}

func newTaskEnvs(cfg config, client *sandbox.Client, evals *evaluator) *taskEnvs {
	return &taskEnvs{cfg: cfg, client: client, evals: evals, tasks: map[string]*task.Tasks{}, byID: map[string]*taskEntry{}}
}

// of returns the tasks of dataset name, preparing them on first use with
// the evaluator's flags.
func (te *taskEnvs) of(ctx context.Context, name string) (*task.Tasks, error) {
	te.mu.Lock()
	defer te.mu.Unlock()
	if t, ok := te.tasks[name]; ok {
		return t, nil
	}
	ec := swebench.Config{
		Dataset: te.evals.datasets[name], Repos: te.evals.repos, Timeout: te.cfg.EvalTimeout,
		Image: te.cfg.Images[0], ImageMapFile: te.cfg.ImageMap, Namespace: te.cfg.Namespace, ImageTag: te.cfg.ImageTag,
		Sandboxes: []*sandbox.Client{te.client}, Limits: sandbox.Limits{Memory: te.cfg.Memory},
	}
	if te.cfg.Namespace != "" && te.cfg.Namespace != swebench.NoNamespace || te.cfg.ImageTag != "" {
		ec.Repos, ec.Image = nil, "" // prebuilt: the official images hold the repository
	}
	dir, err := os.MkdirTemp(te.evals.workDir, "tasks-")
	if err != nil {
		return nil, err
	}
	t, err := task.New(ctx, task.Config{Eval: ec, Dir: dir})
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
	if e, ok := te.byID[id]; ok && e.owner == owner {
		return e
	}
	return nil
}

func (te *taskEnvs) count(owner string) int {
	te.mu.Lock()
	defer te.mu.Unlock()
	n := 0
	for _, e := range te.byID {
		if e.owner == owner {
			n++
		}
	}
	return n
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
		errs = append(errs, e.env.Close(), e.egress.Close())
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
	Success []string `json:"success"`
	Failure []string `json:"failure"`
}

type taskSubmitOut struct {
	Session    string      `json:"session"`
	InstanceID string      `json:"instance_id"`
	Resolved   bool        `json:"resolved"`
	Outcome    string      `json:"outcome" jsonschema:"resolved, unresolved, out_of_memory, patch_failed, timed_out, empty_patch, error, or an infrastructure failure (image_missing, engine_lost, ...)"`
	Status     string      `json:"status"`
	FailToPass testResults `json:"fail_to_pass" jsonschema:"tests that must go from failing to passing"`
	PassToPass testResults `json:"pass_to_pass" jsonschema:"tests that passed before and must still pass"`
	Error      string      `json:"error,omitempty"`
	Report     any         `json:"report,omitempty" jsonschema:"the official report.json of the instance"`
	LogTail    string      `json:"log_tail,omitempty" jsonschema:"the end of the test output"`
	PatchBytes int         `json:"patch_bytes"`
	DurationMS int64       `json:"duration_ms"`
}

type taskResetOut struct {
	Session    string `json:"session"`
	Replaced   bool   `json:"replaced" jsonschema:"the environment did not verify after the reset, so a new sandbox replaced it"`
	Mismatch   string `json:"mismatch,omitempty"`
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
		if s.tasks.count(c.owner) >= s.cfg.MaxSessions {
			return nil, toolErrorf("you have %d task sessions open, the most this server allows; close one with swebench_task_close", s.cfg.MaxSessions)
		}
		t, err := s.tasks.of(ctx, name)
		if err != nil {
			return nil, err
		}
		release, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		eg, err := s.newTaskEgress(in.Egress)
		if err != nil {
			return nil, err
		}
		env, err := t.StartWith(ctx, task.StartRequest{ID: in.InstanceID, Spec: eg.spec()})
		if err != nil {
			err = errors.Join(err, eg.Close())
		}
		if errors.Is(err, task.ErrUnknownTask) {
			return nil, toolErrorf("instance %q has no task environment on this server (no image or test specification for it)", in.InstanceID)
		}
		if err != nil {
			return nil, err
		}
		id := randomID("t")
		c.session = id
		s.tasks.mu.Lock()
		s.tasks.byID[id] = &taskEntry{id: id, owner: c.owner, dataset: name, env: env, egress: eg}
		s.tasks.mu.Unlock()
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

	addTool[taskSubmitIn, any](s, srv, &mcp.Tool{
		Name: "swebench_task_submit",
		Description: "Grade your change in a task session exactly as the official SWE-bench harness grades a prediction: your diff is applied in a fresh sandbox and the task's tests run. " +
			"Returns resolved, the FAIL_TO_PASS / PASS_TO_PASS results, the outcome and the end of the test output. The session stays as it is. Takes a while; consider background: true.",
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
			if err != nil {
				return nil, err
			}
			out := submitOut(in.Session, sub)
			out.DurationMS = time.Since(start).Milliseconds()
			res, n := result(out)
			c.bytes = n
			return res, nil
		})
	})

	addTool[sessionIn, taskResetOut](s, srv, &mcp.Tool{
		Name:        "swebench_task_reset",
		Description: "Start a task session over: the repository, /tmp and processes as swebench_task_start left them, checked before it is handed back.",
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
		res, n := result(taskResetOut{Session: in.Session, Replaced: r.Replaced, Mismatch: r.Mismatch, DurationMS: r.Duration.Milliseconds()})
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

func submitOut(session string, sub *task.Submission) taskSubmitOut {
	r := sub.Result
	out := taskSubmitOut{
		Session: session, InstanceID: r.InstanceID, Outcome: string(r.Outcome), Status: string(r.Status),
		Resolved: r.Outcome == swebench.OutcomeResolved, Error: r.Error, PatchBytes: len(sub.Patch),
		FailToPass: testResults{Success: []string{}, Failure: []string{}}, PassToPass: testResults{Success: []string{}, Failure: []string{}},
	}
	if sub.Report != nil && sub.Report.TestsStatus != nil {
		f, p := sub.Report.TestsStatus.FailToPass, sub.Report.TestsStatus.PassToPass
		out.FailToPass = testResults{Success: nonNil(f.Success), Failure: nonNil(f.Failure)}
		out.PassToPass = testResults{Success: nonNil(p.Success), Failure: nonNil(p.Failure)}
	}
	if sub.ReportJSON != nil {
		var m map[string]any
		if json.Unmarshal(sub.ReportJSON, &m) == nil {
			out.Report = m[r.InstanceID]
		}
	}
	if sub.TestOutput != "" {
		if b, err := os.ReadFile(sub.TestOutput); err == nil {
			out.LogTail = tail(string(b), logTailBytes)
		}
	}
	return out
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

// taskReadFile reads a file of a task environment for session_read_file.
func (s *server) taskReadFile(ctx context.Context, c *call, e *taskEntry, p string) ([]byte, string, error) {
	p, err := taskPath(p)
	if err != nil {
		return nil, "", err
	}
	r, err := e.env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"cat", "--", p}, OutputLimit: int(s.cfg.StoreLimit) + 1, Timeout: s.cfg.Timeout})
	if err != nil {
		return nil, "", err
	}
	if r.ExitCode != 0 {
		return nil, "", toolErrorf("cannot read %s: %s", p, strings.TrimSpace(r.Stderr.String()))
	}
	if r.Stdout.Truncated {
		return nil, "", toolErrorf("%s is larger than this server passes on (%d bytes); process it in the session instead", p, s.cfg.StoreLimit)
	}
	return r.Stdout.Bytes(), p, nil
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
