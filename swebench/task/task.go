package task

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/repo"
)

// LabelTask marks the sandboxes of task environments; its value is the
// instance id.
const LabelTask = "swebox.task"

// ModelName is the model name of the predictions Submit grades; it names
// their log directory.
const ModelName = "swebox-task"

// Config chooses the tasks and how they are graded.
type Config struct {
	// Eval is the evaluator's configuration, with the meaning it has for
	// swebench.Evaluate: Dataset (required), InstanceIDs (the tasks
	// offered; default every row), Mode, Rules, the image fields (Image,
	// ImageMap, ImageMapFile, Namespace, ImageTag), Repos or RepoSources,
	// Timeout, Runtime, Limits, Sandboxes (default: one client from the
	// environment, closed by Close). Predictions, RunID, LogDir and
	// ReportDir are the tasks' own. A client made with sandbox.WithPool
	// serves Start from its warm pool.
	Eval swebench.Config
	// Dir holds the submissions' logs (run_evaluation/<run>/swebox-task/<id>)
	// and the workspaces. Default: a new temporary directory, removed by
	// Close.
	Dir string
	// Spec, when set, edits each environment's sandbox spec before it
	// starts: the way to open egress (e.g. mount an agent/egress proxy's
	// socket and set its proxy variables), add mounts or change limits.
	// Default: the evaluator's hardened spec, every command admitted, no
	// network.
	Spec func(*sandbox.Spec)
	// Feedback is what Env.Submit's Submission tells of the hidden tests:
	// FeedbackVerdict (the verdict and the counts, no test names, no
	// report.json, no test output; the logs removed) or FeedbackFull
	// (everything the evaluator wrote). Tasks.Grade, the operator's, is not
	// bound by it. Default: FeedbackVerdict.
	Feedback Feedback
	// MaxSubmissions caps the submissions of each environment, Resets
	// included; Env.Submit then fails with ErrSubmissionLimit. A submission
	// that fails for the infrastructure (an error, no verdict) does not
	// count. Default: 0, no limit.
	MaxSubmissions int
	// NoSpare: every Reset starts the new sandbox itself. By default an
	// environment, once reset, keeps one sandbox started ahead for the
	// next Reset (a second container, and in workspace mode a second
	// checkout), so that from the second Reset on a Reset is a swap; an
	// environment never reset has none. Default: false.
	NoSpare bool
}

// Tasks starts task environments for the rows of a dataset. Its methods are
// safe for concurrent use.
type Tasks struct {
	cfg     Config
	plan    *swebench.Plan
	rows    map[string]dataset.Instance
	ids     []string
	dir     string
	ownDir  bool
	lock    *os.File // the lock of the directory New made, see taskdir.go
	clients []*sandbox.Client
	owned   []*sandbox.Client

	mu     sync.Mutex
	closed bool
}

// New prepares the tasks of cfg: the evaluator's plan of every offered row
// (each test spec built, the engines and images checked) with the rows'
// own patches as stand-in predictions, so that Start can prepare any of
// them. It fails as swebench.Prepare fails.
func New(ctx context.Context, cfg Config) (*Tasks, error) {
	t := &Tasks{cfg: cfg, rows: map[string]dataset.Instance{}, dir: cfg.Dir}
	if t.dir == "" {
		sweepTaskDirs(cfg.Eval.Logger)
		d, lock, err := makeTaskDir()
		if err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		t.dir, t.ownDir, t.lock = d, true, lock
	}
	fail := func(err error) (*Tasks, error) { return nil, errors.Join(err, t.Close()) }
	abs, err := filepath.Abs(t.dir)
	if err != nil {
		return fail(fmt.Errorf("tasks: %w", err))
	}
	t.dir = abs
	ec := cfg.Eval
	if len(ec.Sandboxes) == 0 {
		c, err := sandbox.New(sandbox.WithLogger(ec.Logger))
		if ec.Logger == nil {
			c, err = sandbox.New()
		}
		if err != nil {
			return fail(fmt.Errorf("tasks: %w", err))
		}
		t.owned = append(t.owned, c)
		ec.Sandboxes = []*sandbox.Client{c}
	}
	t.clients = ec.Sandboxes
	ec.Predictions = dataset.GoldPredictions(ec.Dataset)
	for i := range ec.Predictions {
		if ec.Predictions[i].EmptyPatch() {
			// Every offered row needs a plan entry, with or without a
			// reference patch.
			p := "\n"
			ec.Predictions[i].ModelPatch = &p
		}
	}
	// The run id labels the task sandboxes (swebench.LabelRun), so that
	// `eval prune --run_id` and `eval clean` find one Tasks' sandboxes and
	// no other program's.
	ec.RunID = "task-" + randomHex(6)
	ec.LogDir, ec.ReportDir = filepath.Join(t.dir, "logs"), filepath.Join(t.dir, "reports")
	ec.WorkDir = filepath.Join(t.dir, "work")
	ec.RewriteReports = false
	if ec.Mode == "" {
		// The mode is the evaluator's inference, fixed for every submission.
		ec.Mode = inferredMode(ec)
	}
	if ec.Mode == harness.ModeWorkspace && ec.Repos == nil {
		rc, err := repo.New(repo.WithLocalSources(ec.RepoSources...))
		if err != nil {
			return fail(fmt.Errorf("tasks: repository cache: %w", err))
		}
		ec.Repos = rc
	}
	if ec.ShareObjects {
		return fail(errors.New("tasks: ShareObjects is not supported: an agent's environment must not read later commits"))
	}
	plan, err := swebench.Prepare(ctx, ec)
	if err != nil {
		return fail(fmt.Errorf("tasks: %w", err))
	}
	t.plan = plan
	t.cfg.Eval = ec
	for _, id := range plan.Instances {
		tb, err := plan.Testbed(id)
		if err != nil {
			continue // no image or no test spec: not a task
		}
		t.rows[id] = tb.Instance
		t.ids = append(t.ids, id)
	}
	sort.Strings(t.ids)
	return t, nil
}

// inferredMode is the mode swebench.Prepare infers for ec.
func inferredMode(ec swebench.Config) harness.Mode {
	ec.RewriteReports = true // plan only: no engine needed to learn the mode
	ec.Sandboxes = nil
	p, err := swebench.Prepare(context.Background(), ec)
	if err != nil {
		return harness.ModeWorkspace
	}
	defer p.Close()
	return p.Mode
}

// Dir is the directory of the submissions' logs and the workspaces:
// Config.Dir, or the one New made.
func (t *Tasks) Dir() string { return t.dir }

// Mode is the evaluation mode of the tasks.
func (t *Tasks) Mode() harness.Mode { return t.plan.Mode }

// IDs lists the instance ids of the tasks, sorted.
func (t *Tasks) IDs() []string { return append([]string(nil), t.ids...) }

// Instance returns the dataset row of a task.
func (t *Tasks) Instance(id string) (dataset.Instance, bool) {
	r, ok := t.rows[id]
	return r, ok
}

// Close releases the plan, the clients New made and, when Config.Dir was
// empty, the directory of logs. Environments still open are the caller's
// to close first. Safe to call twice.
func (t *Tasks) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	var errs []error
	if t.plan != nil {
		errs = append(errs, t.plan.Close())
	}
	for _, c := range t.owned {
		errs = append(errs, c.Close())
	}
	if t.ownDir {
		errs = append(errs, fsutil.RemoveAll(t.dir))
		if t.lock != nil {
			errs = append(errs, t.lock.Close())
		}
	}
	return errors.Join(errs...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
