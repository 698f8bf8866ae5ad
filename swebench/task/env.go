package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// Env is one task environment: a sandbox whose /testbed holds the
// repository at base_commit as the evaluator prepares it before it applies
// the model patch. The agent works through [Env.Sandbox] (Exec, CopyIn,
// CopyOut), then [Env.Diff] and [Env.Submit]; [Env.Reset] makes the
// environment as Start gave it for the next rollout. Its methods are safe
// for concurrent use, but Reset and Close wait for nothing: a command
// running meanwhile is killed.
type Env struct {
	// Instance is the task's dataset row; ProblemStatement is the task.
	Instance dataset.Instance

	t  *Tasks
	mu sync.Mutex
	sb *sandbox.Sandbox
	// ws is the host directory bind-mounted at /testbed, "" when none.
	ws string
	// snap is what Start recorded, kept on the host so that the sandbox
	// cannot change what Reset verifies against.
	snap snapshot
	// Started is how long Start took, until the first command could run.
	Started time.Duration
	// spec is StartRequest.Spec, applied again when Reset replaces the
	// sandbox.
	spec func(*sandbox.Spec)
	// submits counts Submit calls against Config.MaxSubmissions.
	submits submitCount
}

// snapshot is the state of a started environment.
type snapshot struct {
	head    string // the commit HEAD resolves to
	headRef string // the content of .git/HEAD
	tree    string // the tree of every file of /testbed, ignored ones included
	tmp     string // the entries of /tmp
	refs    string // git for-each-ref's "objectname refname" lines
	// keep are the processes running at Start (the sandbox's own);
	// keepers those whose children come and go (the idle loop's sleep).
	keep, keepers []string
}

// Start starts the environment of task id: a sandbox from the instance's
// image, hardened as the evaluator's (no network, read-only root,
// capabilities dropped, limits) but admitting every command, with
// /testbed prepared exactly as swebench.Plan.Run prepares it before the
// model patch (see swebench.Testbed). With a pooled client the sandbox (and
// in workspace mode its checkout) comes from the warm pool.
func (t *Tasks) Start(ctx context.Context, id string) (*Env, error) {
	return t.StartWith(ctx, StartRequest{ID: id})
}

// StartRequest is what StartWith starts.
type StartRequest struct {
	// ID is the task's instance id.
	ID string
	// Spec, when set, edits this environment's sandbox spec after
	// Config.Spec, for its first sandbox and for any sandbox Reset
	// replaces it with: the way to give one environment egress (mount an
	// agent/egress proxy's socket, see agent.SandboxEgress). Default: none.
	Spec func(*sandbox.Spec)
}

// StartWith is Start with the options of req.
func (t *Tasks) StartWith(ctx context.Context, req StartRequest) (*Env, error) {
	id := req.ID
	inst, ok := t.rows[id]
	if !ok {
		return nil, fmt.Errorf("start task: %w: %q", ErrUnknownTask, id)
	}
	start := time.Now()
	e := &Env{Instance: inst, t: t, spec: req.Spec}
	if err := e.startSandbox(ctx); err != nil {
		return nil, fmt.Errorf("start task %s: %w", id, err)
	}
	e.Started = time.Since(start)
	return e, nil
}

// ErrUnknownTask: the instance is not one of the tasks.
var ErrUnknownTask = errors.New("no such task")

// ErrResetVerify: after Reset the environment differed from Start's; the
// sandbox was replaced by a new one.
var ErrResetVerify = errors.New("the reset environment differs from the started one")

func (e *Env) startSandbox(ctx context.Context) error {
	tb, err := e.t.plan.Testbed(e.Instance.InstanceID)
	if err != nil {
		return err
	}
	spec := tb.Spec
	spec.Policy = sandbox.AllowAll()
	spec.Labels = map[string]string{LabelTask: e.Instance.InstanceID}
	if e.t.cfg.Spec != nil {
		e.t.cfg.Spec(&spec)
	}
	if e.spec != nil {
		e.spec(&spec)
	}
	var sb *sandbox.Sandbox
	switch {
	case tb.Checkout == nil: // prebuilt: /testbed is a volume the engine fills from the image
		sb, err = tb.Client.Create(ctx, spec)
	case tb.Bind:
		parent := filepath.Join(e.t.dir, "work")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		sb, err = tb.Client.CreateWithWorkspace(ctx, spec, sandbox.NewWorkspace{Parent: parent, Prepare: func(dir string) error {
			_, err := tb.Checkout(context.WithoutCancel(ctx), dir)
			return err
		}})
		if err == nil {
			e.ws = sb.Spec().Workspace
		}
	default: // copied in, as the evaluator does for remote engines
		var dir string
		dir, err = os.MkdirTemp(e.t.dir, "checkout-")
		if err != nil {
			return err
		}
		defer fsutil.RemoveAll(dir)
		if _, err = tb.Checkout(ctx, filepath.Join(dir, "repo")); err != nil {
			return err
		}
		if sb, err = tb.Client.Create(ctx, spec); err != nil {
			return err
		}
		if _, err = tb.CopyCheckout(ctx, sb, filepath.Join(dir, "repo")); err != nil {
			return errors.Join(err, removeSandbox(sb, ""))
		}
	}
	if err != nil {
		return err
	}
	snap, err := takeSnapshot(ctx, sb)
	if err != nil {
		return errors.Join(err, removeSandbox(sb, e.ws))
	}
	e.sb, e.snap = sb, snap
	return nil
}

// Sandbox is the environment's sandbox, for Exec, CopyIn and CopyOut. After
// a Reset that replaced it, it is a new one: ask again.
func (e *Env) Sandbox() *sandbox.Sandbox {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sb
}

// Exec runs a command in the environment, in /testbed unless
// req.WorkingDir says otherwise.
func (e *Env) Exec(ctx context.Context, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if req.WorkingDir == "" {
		req.WorkingDir = harness.RepoDir
	}
	sb := e.Sandbox()
	if sb == nil {
		return sandbox.ExecResult{}, errors.New("task environment is closed")
	}
	return sb.Exec(ctx, req)
}

// DiffCommand is how Diff computes the model patch, run in /testbed: every
// change to the worktree against base_commit, new files included and
// ignored ones not, through a scratch index so that the agent's own index
// is left as it is. It is the `git add -A && git diff --cached` of
// SWE-agent and mini-swe-agent, with file modes ignored as in the official
// harness's `git -c core.fileMode=false diff`. Changes the agent made to
// the test files that the test patch touches are in the patch, as they are
// in theirs: the official eval script checks those files out at
// base_commit before it applies the test patch, so they do not count.
const DiffCommand = `set -e
idx="$(git rev-parse --git-dir)/swebox-task/diff-index"
rm -f "$idx"; cp "$(git rev-parse --git-dir)/index" "$idx" 2>/dev/null || true
export GIT_INDEX_FILE="$idx"
git -c core.fileMode=false -c core.hooksPath=/dev/null add -A
git -c core.fileMode=false diff --cached --no-color --no-ext-diff "$1"
rm -f "$idx"`

// Diff returns the agent's change as the model patch (see DiffCommand).
func (e *Env) Diff(ctx context.Context) (string, error) {
	r, err := e.Exec(ctx, sandbox.ExecRequest{
		Cmd: []string{"sh", "-c", DiffCommand, "diff", e.Instance.BaseCommit}, Timeout: 2 * time.Minute, OutputLimit: diffLimit,
	})
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	if !r.Success() {
		return "", fmt.Errorf("diff: git exited %d: %s", r.ExitCode, strings.TrimSpace(r.Stderr.String()))
	}
	if r.Stdout.Truncated {
		return "", fmt.Errorf("diff: the patch is larger than %d bytes", diffLimit)
	}
	return r.Stdout.String(), nil
}

// diffLimit caps a model patch.
const diffLimit = 64 << 20

// Submit grades the environment's Diff as swebench.Evaluate grades a
// prediction with that patch (see [Tasks.Grade]). The environment is left
// as it is.
// Config.Feedback decides what the Submission tells of the tests, and
// Config.MaxSubmissions how many are graded (then ErrSubmissionLimit).
func (e *Env) Submit(ctx context.Context, progress func(swebench.Event)) (*Submission, error) {
	return e.submit(ctx, progress) // under the tasks' policy, see policy.go
}

// Close removes the environment's sandbox and workspace. Safe to call
// twice.
func (e *Env) Close() error {
	e.mu.Lock()
	sb, ws := e.sb, e.ws
	e.sb, e.ws = nil, ""
	e.mu.Unlock()
	if sb == nil {
		return nil
	}
	return removeSandbox(sb, ws)
}

// removeSandbox removes sb, then its workspace ws ("" for none), on a
// context of its own.
func removeSandbox(sb *sandbox.Sandbox, ws string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := sb.Remove(ctx)
	if ws != "" {
		err = errors.Join(err, fsutil.RemoveAll(ws))
	}
	return err
}
