package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	_ "github.com/swebox/swebox/swebench/dataset/parquet" // dataset.ReadParquet and LoadDataset read .parquet files
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/repo"
)

// logTailBytes is how much of test_output.txt a result carries.
const logTailBytes = 8 << 10

// evaluator grades patches against the instances of the datasets the server
// was started with.
type evaluator struct {
	datasets map[string][]dataset.Instance
	names    []string
	repos    *repo.Cache
	client   *sandbox.Client
	image    string
	timeout  time.Duration
	memory   int64
	workDir  string
	// feedback: results carry the test names, report.json and the test
	// output (--test_feedback); otherwise the verdict and the counts.
	feedback bool
	grading  swebench.GradingMode // --strict
}

func newEvaluator(cfg config, client *sandbox.Client) (*evaluator, error) {
	e := &evaluator{datasets: map[string][]dataset.Instance{}, client: client, image: cfg.Images[0],
		timeout: cfg.EvalTimeout, memory: cfg.Memory, feedback: cfg.TestFeedback, grading: swebench.GradingOfficial}
	if cfg.Strict {
		e.grading = swebench.GradingStrict
	}
	for _, p := range cfg.Datasets {
		ds, err := dataset.LoadDataset(p)
		if err != nil {
			return nil, fmt.Errorf("--dataset: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		if _, dup := e.datasets[name]; dup {
			return nil, fmt.Errorf("--dataset: two datasets named %q", name)
		}
		e.datasets[name] = ds
		e.names = append(e.names, name)
	}
	sort.Strings(e.names)
	if len(e.names) == 0 {
		return e, nil
	}
	// --repos asks for workspace mode, in the server's default image;
	// without it each instance runs as the library plans it (official
	// repositories in their official images).
	if len(cfg.Repos) > 0 {
		r, err := repo.New(repo.WithLocalSources(cfg.Repos...))
		if err != nil {
			return nil, fmt.Errorf("repository cache: %w", err)
		}
		e.repos = r
	}
	dir, err := os.MkdirTemp("", "swebox-mcp-eval-")
	if err != nil {
		return nil, err
	}
	e.workDir = dir
	return e, nil
}

func (e *evaluator) Close() error {
	if e.workDir == "" {
		return nil
	}
	return os.RemoveAll(e.workDir)
}

// instance finds id in the named dataset ("" when the server has one).
func (e *evaluator) instance(name, id string) (dataset.Instance, string, error) {
	if len(e.names) == 0 {
		return dataset.Instance{}, "", toolErrorf("this server was started without a SWE-bench dataset (--dataset); it cannot evaluate or grade")
	}
	if name == "" {
		if len(e.names) > 1 {
			return dataset.Instance{}, "", toolErrorf("this server has several datasets; name one: %s", strings.Join(e.names, ", "))
		}
		name = e.names[0]
	}
	ds, ok := e.datasets[name]
	if !ok {
		return dataset.Instance{}, "", toolErrorf("no dataset %q on this server; it has: %s", name, strings.Join(e.names, ", "))
	}
	for _, inst := range ds {
		if inst.InstanceID == id {
			return inst, name, nil
		}
	}
	return dataset.Instance{}, "", toolErrorf("no instance %q in dataset %q", id, name)
}

type fraction struct {
	Passed int `json:"passed"`
	Total  int `json:"total"`
}

type evaluateIn struct {
	InstanceID string `json:"instance_id" jsonschema:"the SWE-bench instance, e.g. astropy__astropy-12907"`
	Patch      string `json:"patch" jsonschema:"your fix as a unified diff (git diff output) against the instance's base commit; test files you change are reset before the tests run"`
	Dataset    string `json:"dataset,omitempty" jsonschema:"which of the server's datasets holds the instance; needed only when it has several"`
	Background bool   `json:"background,omitempty" jsonschema:"return a job id at once (evaluations take minutes); poll job_status for the report"`
}

// evaluateOut is a graded patch (the shape of a task submission's too)
// and the dataset of its instance.
type evaluateOut struct {
	gradedPatch
	Dataset string `json:"dataset"`
}

type gradeIn struct {
	InstanceID string `json:"instance_id" jsonschema:"the SWE-bench instance the log belongs to"`
	Log        string `json:"log" jsonschema:"the test output (test_output.txt) of the instance's eval script; a log without start and end markers (harness 2.x) is graded whole, as the official rewrite mode does"`
	Dataset    string `json:"dataset,omitempty" jsonschema:"which of the server's datasets holds the instance; needed only when it has several"`
}

type gradeOut struct {
	InstanceID string         `json:"instance_id"`
	Resolved   bool           `json:"resolved"`
	FailToPass fraction       `json:"fail_to_pass" jsonschema:"tests that must go from failing to passing: how many pass"`
	PassToPass fraction       `json:"pass_to_pass" jsonschema:"tests that passed before and must still pass: how many do"`
	Report     map[string]any `json:"report,omitempty" jsonschema:"report.json as the official harness writes it, when the server tells test names (--test_feedback)"`
}

// evaluate grades in.Patch; progress, when set, receives a line as the
// instance starts and one as it ends.
func (e *evaluator) evaluate(ctx context.Context, in evaluateIn, progress io.Writer) (evaluateOut, error) {
	inst, name, err := e.instance(in.Dataset, in.InstanceID)
	if err != nil {
		return evaluateOut{}, err
	}
	dir, err := os.MkdirTemp(e.workDir, "run-")
	if err != nil {
		return evaluateOut{}, err
	}
	defer os.RemoveAll(dir)
	patch := in.Patch
	cfg := swebench.Config{
		Dataset:     []dataset.Instance{inst},
		Predictions: []dataset.Prediction{{InstanceID: inst.InstanceID, ModelNameOrPath: "mcp", ModelPatch: &patch}},
		RunID:       filepath.Base(dir),
		MaxWorkers:  1,
		Timeout:     e.timeout,
		LogDir:      filepath.Join(dir, "logs"),
		ReportDir:   dir,
		WorkDir:     filepath.Join(dir, "work"),
		Sandboxes:   []*sandbox.Client{e.client},
		Limits:      sandbox.Limits{Memory: e.memory},
		GradingMode: e.grading,
	}
	if e.repos != nil {
		cfg.Image, cfg.Repos = e.image, e.repos
	}
	if progress != nil {
		cfg.Progress = func(ev swebench.Event) { fmt.Fprintln(progress, progressLine(ev)) }
	}
	res, err := swebench.Evaluate(ctx, cfg)
	if err != nil {
		return evaluateOut{}, fmt.Errorf("evaluate: %w", err)
	}
	var ir swebench.InstanceResult
	switch {
	case len(res.Instances) == 0 && res.Outcomes[inst.InstanceID] == swebench.OutcomeEmptyPatch:
		// Not run, as in the official harness.
		ir = swebench.InstanceResult{InstanceID: inst.InstanceID, Status: swebench.StatusEmptyPatch, Outcome: swebench.OutcomeEmptyPatch}
	case len(res.Instances) != 1:
		return evaluateOut{}, fmt.Errorf("evaluate: %d instance results for one instance", len(res.Instances))
	default:
		ir = res.Instances[0]
	}
	// The run's logs go with its temporary directory; the result carries
	// what the client is told of them.
	g, err := newGradedPatch(ir, nil, e.feedback)
	if err != nil {
		return evaluateOut{}, err
	}
	return evaluateOut{gradedPatch: g, Dataset: name}, nil
}

// patchOutput is each patch command tried and what it printed, as
// run_instance.log has them after the official "Patch Apply Failed".
func patchOutput(attempts []swebench.PatchAttempt) string {
	var b strings.Builder
	for _, a := range attempts {
		if a.Applied() {
			continue
		}
		fmt.Fprintf(&b, "$ %s (exit %d)\n%s", a.Command, a.ExitCode, a.Output)
		if !strings.HasSuffix(a.Output, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// progressLine describes an instance's start or end in one line, e.g.
// "finished swebox__demo-1: resolved (1/1)".
func progressLine(ev swebench.Event) string {
	line := string(ev.Kind) + " " + ev.InstanceID
	if r := ev.Result; r != nil {
		switch {
		case r.Outcome != "" && r.Outcome != swebench.OutcomeError:
			line += ": " + string(r.Outcome) // says it all: patch_failed, timed_out, cancelled...
		case r.Error != "":
			msg, _, _ := strings.Cut(r.Error, "\n")
			line += ": " + string(r.Status) + " (" + msg + ")"
		default:
			line += ": " + string(r.Status)
		}
	}
	return fmt.Sprintf("%s (%d/%d)", line, ev.Done, ev.Total)
}

func (e *evaluator) grade(in gradeIn) (gradeOut, error) {
	inst, _, err := e.instance(in.Dataset, in.InstanceID)
	if err != nil {
		return gradeOut{}, err
	}
	rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: inst, Log: []byte(in.Log), GradingMode: e.grading})
	if err != nil {
		return gradeOut{}, toolErrorf("instance %s: the log cannot be graded: %v", inst.InstanceID, err)
	}
	out := gradeOut{InstanceID: inst.InstanceID, Resolved: rep.Resolved}
	if ts := rep.TestsStatus; ts != nil {
		out.FailToPass = fraction{len(ts.FailToPass.Success), len(ts.FailToPass.Success) + len(ts.FailToPass.Failure)}
		out.PassToPass = fraction{len(ts.PassToPass.Success), len(ts.PassToPass.Success) + len(ts.PassToPass.Failure)}
	}
	if !e.feedback {
		return out, nil
	}
	if out.Report, err = reportBody(rep); err != nil {
		return gradeOut{}, err
	}
	return out, nil
}

// reportBody is the entry of report.json under the instance's id, as JSON
// values (the tools' structured output).
func reportBody(rep grade.InstanceReport) (map[string]any, error) {
	var m map[string]map[string]any
	if err := json.Unmarshal(rep.Encode(), &m); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	return m[rep.InstanceID], nil
}

// feedbackNote is what a tool's description adds when the server tells
// clients the hidden tests (--test_feedback), "" when it does not.
func (s *server) feedbackNote(what string) string {
	if s.cfg.TestFeedback {
		return what
	}
	return ""
}

func (s *server) addSWEBenchTools(srv *mcp.Server) {
	addTool[evaluateIn, any](s, srv, &mcp.Tool{
		Name: "swebench_evaluate",
		Description: "Evaluate a patch for a SWE-bench instance exactly as the official harness does: in a sandbox of the instance's official image (or of the repository checked out at the instance's base commit, for repositories the official harness does not know), apply your patch, " +
			"run the instance's tests and grade FAIL_TO_PASS and PASS_TO_PASS. Returns resolved or not and the counts of passing tests" + s.feedbackNote(", with the per-test report and the end of the test log") + ". Takes minutes; consider background: true.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in evaluateIn) (*mcp.CallToolResult, error) {
		if _, _, err := s.evals.instance(in.Dataset, in.InstanceID); err != nil {
			return nil, err
		}
		res, err := s.runTool(ctx, req, c, "swebench_evaluate", in.Background, s.cfg.EvalTimeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			// A background job's output is its progress, for job_status.
			var progress io.Writer
			if c.stdout != nil {
				progress = c.stdout
			}
			out, err := s.evals.evaluate(ctx, in, progress)
			if err != nil {
				return nil, err
			}
			res, n := result(out)
			c.bytes = n
			return res, nil
		})
		return res, err
	})

	addTool[gradeIn, gradeOut](s, srv, &mcp.Tool{
		Name: "swebench_grade_log",
		Description: "Grade the test output of a SWE-bench instance's eval script as the official harness does, without running anything: " +
			"parse the log with the repository's parser and apply the FAIL_TO_PASS / PASS_TO_PASS rules. Returns resolved or not and the counts of passing tests" + s.feedbackNote(", with report.json") + ".",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, c *call, in gradeIn) (*mcp.CallToolResult, error) {
		out, err := s.evals.grade(in)
		if err != nil {
			return nil, err
		}
		res, n := result(out)
		c.bytes = n
		return res, nil
	})
}
