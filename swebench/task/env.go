package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
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
// the model patch. The agent works through [Env.Exec], [Env.ReadFile],
// [Env.WriteFile] or [Env.Sandbox] (Exec, CopyIn, CopyOut), then
// [Env.Diff] and [Env.Submit]; [Env.Reset] gives it a new sandbox, made as
// Start made the first, for the next rollout. Its methods are safe for
// concurrent use, but Reset and Close wait for no command: a command
// running meanwhile is killed.
type Env struct {
	// Instance is the task's dataset row; ProblemStatement is the task.
	Instance dataset.Instance
	// Started is how long Start took, until the first command could run.
	Started time.Duration

	t *Tasks
	// spec is StartRequest.Spec, applied again to every sandbox Reset
	// starts.
	spec func(*sandbox.Spec)
	// resetMu orders Reset and Close.
	resetMu sync.Mutex
	// bg counts the removals under way in the background.
	bg sync.WaitGroup

	mu sync.Mutex
	sb *sandbox.Sandbox
	// ws is the host directory bind-mounted at /testbed, "" when none.
	ws string
	// spare is the sandbox started ahead for the next Reset, nil when
	// none.
	spare  *spare
	closed bool
	// bgErr joins the errors of background removals.
	bgErr error
	// submits counts Submit calls against Config.MaxSubmissions.
	submits submitCount
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
	sb, ws, err := e.newSandbox(ctx)
	if err != nil {
		return nil, fmt.Errorf("start task %s: %w", id, err)
	}
	e.sb, e.ws = sb, ws
	e.Started = time.Since(start)
	return e, nil
}

// ErrUnknownTask: the instance is not one of the tasks.
var ErrUnknownTask = errors.New("no such task")

// newSandbox starts a sandbox of the environment's task, as the
// evaluator prepares one before the model patch, and returns it with its
// host workspace ("" for none). Start and Reset both start theirs here.
func (e *Env) newSandbox(ctx context.Context) (*sandbox.Sandbox, string, error) {
	tb, err := e.t.plan.Testbed(e.Instance.InstanceID)
	if err != nil {
		return nil, "", err
	}
	spec := tb.Spec
	spec.Policy = sandbox.AllowAll()
	// The evaluator's run and instance labels stay, for eval's prune and
	// clean to find task sandboxes as they find its own.
	spec.Labels = maps.Clone(tb.Spec.Labels)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels[LabelTask] = e.Instance.InstanceID
	if e.t.cfg.Spec != nil {
		e.t.cfg.Spec(&spec)
	}
	if e.spec != nil {
		e.spec(&spec)
	}
	var sb *sandbox.Sandbox
	ws := ""
	switch {
	case tb.Checkout == nil: // prebuilt: /testbed is a volume the engine fills from the image
		sb, err = tb.Client.Create(ctx, spec)
	case tb.Bind:
		parent := filepath.Join(e.t.dir, "work")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, "", err
		}
		sb, err = tb.Client.CreateWithWorkspace(ctx, spec, sandbox.NewWorkspace{Parent: parent, Prepare: func(dir string) error {
			_, err := tb.Checkout(context.WithoutCancel(ctx), dir)
			return err
		}})
		if err == nil {
			ws = sb.Spec().Workspace
		}
	default: // copied in, as the evaluator does for remote engines
		var dir string
		dir, err = os.MkdirTemp(e.t.dir, "checkout-")
		if err != nil {
			return nil, "", err
		}
		defer fsutil.RemoveAll(dir)
		if _, err = tb.Checkout(ctx, filepath.Join(dir, "repo")); err != nil {
			return nil, "", err
		}
		if sb, err = tb.Client.Create(ctx, spec); err != nil {
			return nil, "", err
		}
		if _, err = tb.CopyCheckout(ctx, sb, filepath.Join(dir, "repo")); err != nil {
			return nil, "", errors.Join(err, removeSandbox(sb, ""))
		}
	}
	if err != nil {
		return nil, "", err
	}
	return sb, ws, nil
}

// Sandbox is the environment's sandbox, for Exec, CopyIn and CopyOut; nil
// once closed and while a Reset runs. Every Reset hands over a new one: ask
// again after it.
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
		return sandbox.ExecResult{}, errors.New("task environment is closed, or a Reset is handing it a new sandbox")
	}
	return sb.Exec(ctx, req)
}

// ReadFile returns the content of the file at path in the environment
// (relative to /testbed), read as the agent's user reads it. A file larger
// than MaxFileBytes is an error.
func (e *Env) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := e.Exec(ctx, sandbox.ExecRequest{
		Cmd: []string{"/bin/cat", "--", path}, Env: map[string]string{"LC_ALL": "C"},
		Timeout: fileTimeout, OutputLimit: MaxFileBytes + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !r.Success() {
		return nil, fmt.Errorf("read %s: %s", path, fileError(r))
	}
	if r.Stdout.Truncated || len(r.Stdout.Bytes()) > MaxFileBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, MaxFileBytes)
	}
	return r.Stdout.Bytes(), nil
}

// WriteFile writes data to the file at path in the environment (relative
// to /testbed), creating it with mode 0644 less the umask, or truncating
// it, as the agent's user; the directory must exist.
func (e *Env) WriteFile(ctx context.Context, path string, data []byte) error {
	if len(data) > MaxFileBytes {
		return fmt.Errorf("write %s: larger than %d bytes", path, MaxFileBytes)
	}
	r, err := e.Exec(ctx, sandbox.ExecRequest{
		Cmd: []string{"/bin/sh", "-c", `exec cat > "$1"`, "write", path}, Env: map[string]string{"LC_ALL": "C"},
		Stdin: bytes.NewReader(data), Timeout: fileTimeout,
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !r.Success() {
		return fmt.Errorf("write %s: %s", path, fileError(r))
	}
	return nil
}

// MaxFileBytes caps what ReadFile and WriteFile move.
const MaxFileBytes = 64 << 20

// fileTimeout bounds ReadFile and WriteFile.
const fileTimeout = 2 * time.Minute

// fileError describes a failed cat.
func fileError(r sandbox.ExecResult) string {
	if r.TimedOut {
		return "timed out"
	}
	msg := strings.TrimSpace(r.Stderr.String())
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:] // cat's "cat: PATH: No such file or directory"
	}
	return msg
}

// DiffCommand is how Diff computes the model patch, run in /testbed with
// the base commit as its argument: every change to the worktree against
// base_commit, new files included and ignored ones not (the repository's
// .gitignore files), as the `git add -A && git diff --cached` of SWE-agent
// and mini-swe-agent, with file modes ignored as in the official harness's
// `git -c core.fileMode=false diff`.
//
// None of the agent's git setup takes part: git runs with a throwaway git
// directory under /tmp and an index of its own, no system or global
// configuration, no hooks, no fsmonitor, no attributes file and no diff or
// filter drivers (none is configured), and a fixed PATH on the read-only
// root (see diffEnv). So nothing the agent planted in .git (config,
// hooks, info/, worktrees, alternates of the git directory) or in HOME
// runs or redirects the diff; the repository's object store is read only
// for the base commit, through an alternate. Files that running Python's
// tests writes (__pycache__/, *.pyc, *.pyo, .pytest_cache/) are left out;
// other binary files are in the patch in full (--binary), so that the
// evaluator's `git apply` takes them. Changes the agent made to the test
// files that the test patch touches are in the patch, as in theirs: the
// official eval script checks those files out at base_commit before it
// applies the test patch, so they do not count.
const DiffCommand = `set -eu
unset GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT GIT_EXTERNAL_DIFF GIT_DIFF_OPTS GIT_CEILING_DIRECTORIES GIT_NAMESPACE GIT_COMMON_DIR GIT_REPLACE_REF_BASE GIT_NO_REPLACE_OBJECTS GIT_GRAFT_FILE GIT_SHALLOW_FILE GIT_ATTR_SOURCE GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_TRACE GIT_TRACE_SETUP GIT_PAGER PAGER
base=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
g=$t/git
mkdir -p "$g/objects/info" "$g/refs" "$g/info"
echo 'ref: refs/heads/swebox' > "$g/HEAD"
echo /testbed/.git/objects > "$g/objects/info/alternates"
printf '%s\n' '__pycache__/' '*.py[co]' '.pytest_cache/' > "$g/info/exclude"
export GIT_DIR="$g" GIT_WORK_TREE="$PWD" GIT_INDEX_FILE="$t/index" HOME="$t" XDG_CONFIG_HOME="$t"
G="git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.fileMode=false -c core.attributesFile=/dev/null -c core.autocrlf=false -c core.untrackedCache=false"
$G read-tree "$base"
$G add -A
$G diff --cached --binary --no-color --no-ext-diff --no-textconv "$base"`

// diffEnv is DiffCommand's environment: no system or global git
// configuration, no attributes of the system, and a PATH of the read-only
// root only, so that a git or sh the agent put on a writable directory of
// the image's PATH is not the one that runs. DiffCommand unsets the git
// variables that could point elsewhere, should the image set them.
var diffEnv = map[string]string{
	"PATH":                   "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"GIT_CONFIG_NOSYSTEM":    "1",
	"GIT_CONFIG_GLOBAL":      "/dev/null",
	"GIT_ATTR_NOSYSTEM":      "1",
	"GIT_NO_REPLACE_OBJECTS": "1",
}

// Diff returns the agent's change as the model patch (see DiffCommand).
func (e *Env) Diff(ctx context.Context) (string, error) {
	r, err := e.Exec(ctx, sandbox.ExecRequest{
		Cmd: []string{"/bin/sh", "-c", DiffCommand, "diff", e.Instance.BaseCommit}, Env: diffEnv,
		WorkingDir: harness.RepoDir, Timeout: 2 * time.Minute, OutputLimit: diffLimit,
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

// Close removes the environment's sandbox, its spare and their
// workspaces, and waits for the removals Reset left under way. Safe to
// call twice.
func (e *Env) Close() error {
	e.resetMu.Lock()
	defer e.resetMu.Unlock()
	return e.closeLocked()
}

// closeLocked is Close with e.resetMu held.
func (e *Env) closeLocked() error {
	e.mu.Lock()
	sb, ws, sp := e.sb, e.ws, e.spare
	e.sb, e.ws, e.spare, e.closed = nil, "", nil, true
	e.mu.Unlock()
	var errs []error
	if sp != nil {
		errs = append(errs, sp.discard())
	}
	if sb != nil {
		errs = append(errs, removeSandbox(sb, ws))
	}
	e.bg.Wait()
	e.mu.Lock()
	errs = append(errs, e.bgErr)
	e.bgErr = nil
	e.mu.Unlock()
	return errors.Join(errs...)
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
