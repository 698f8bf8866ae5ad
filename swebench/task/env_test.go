package task_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

func shell(t *testing.T, sb *sandbox.Sandbox, script string) string {
	t.Helper()
	r, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", script}, WorkingDir: "/testbed"})
	require.NoError(t, err)
	require.True(t, r.Success(), "%s: exit %d\n%s%s", script, r.ExitCode, r.Stdout.String(), r.Stderr.String())
	return r.Stdout.String()
}

func TestStartDiffReset(t *testing.T) {
	startDiffReset(t, testenv.Client(t), "1.1.1.1:80")
}

// leftoverProbe lists the processes whose command line carries the marker
// of the agent's leftover, from /proc. The bracket keeps the probe's own
// command line from matching.
const leftoverProbe = `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f" 2>/dev/null | grep -q "swebox-leftover-[m]arker" && echo "${f%/cmdline}"; done; true`

// startDiffReset starts the first demo task on c and checks Diff and
// Reset: Reset restores what the agent changed and kills what it left
// running (a detached process found by Reset's /proc scan), and replaces
// a sandbox it cannot verify. unreachable is a host:port the sandbox must
// not reach.
func startDiffReset(t *testing.T, c *sandbox.Client, unreachable string) {
	d := loadDemo(t)
	tasks := newTasks(t, d, c)
	ctx := context.Background()
	inst := d.rows[0]
	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer env.Close()
	require.Equal(t, inst.ProblemStatement, env.Instance.ProblemStatement)

	sb := env.Sandbox()
	require.Equal(t, inst.BaseCommit, strings.TrimSpace(shell(t, sb, "git rev-parse HEAD")))
	require.Empty(t, shell(t, sb, "git status --porcelain"))
	diff, err := env.Diff(ctx)
	require.NoError(t, err)
	require.Empty(t, diff, "no change, no patch")
	// Egress is off.
	host, port, err := net.SplitHostPort(unreachable)
	require.NoError(t, err)
	r, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)", host, port}})
	require.NoError(t, err)
	require.NotZero(t, r.ExitCode, "no network")

	// The agent's gold patch as a diff: applied in the sandbox, read back.
	shell(t, sb, "cat > /tmp/p.diff <<'EOF'\n"+inst.Patch+"EOF\ngit apply /tmp/p.diff && rm /tmp/p.diff")
	shell(t, sb, "echo new > brand_new_file.txt")
	diff, err = env.Diff(ctx)
	require.NoError(t, err)
	require.Contains(t, diff, "brand_new_file.txt", "new files are in the patch")
	require.Contains(t, diff, strings.SplitN(strings.SplitN(inst.Patch, "\n", 2)[0], " ", 4)[2][2:], "the changed file is in the patch")
	require.Empty(t, shell(t, sb, "git diff --cached --name-only"), "the agent's index is left alone")

	// Mess things up: commits, branches, ignored files, /tmp, HOME, a
	// process that outlives its command, git config.
	shell(t, sb, `git -c user.email=a@b -c user.name=a commit -qam wip && git checkout -qb other &&
		mkdir -p build && echo x > build/out.o && echo junk > /tmp/junk && echo h > $HOME/.hist &&
		git config core.pager cat && (setsid sleep 1000 >/dev/null 2>&1 &) && chmod +x README* 2>/dev/null; true`)
	shell(t, sb, `nohup sh -c 'while :; do sleep 1; done' swebox-leftover-marker >/dev/null 2>&1 &`)
	require.NotEmpty(t, shell(t, sb, leftoverProbe), "the agent's detached loop outlives its command")
	res, err := env.Reset(ctx)
	require.NoError(t, err)
	old := sb
	sb = env.Sandbox()
	require.NotEqual(t, old.ID(), sb.ID(), "Reset gives a new sandbox")
	require.Equal(t, inst.BaseCommit, strings.TrimSpace(shell(t, sb, "git rev-parse HEAD")))
	require.Empty(t, shell(t, sb, "git status --porcelain --ignored"))
	require.Empty(t, shell(t, sb, "git branch --list other"))
	require.Empty(t, shell(t, sb, "ls -A /tmp/home; ls -A /tmp | grep -v '^home$' || true"))
	require.Empty(t, shell(t, sb, leftoverProbe), "the agent's detached loop is not in the new sandbox")
	diff, err = env.Diff(ctx)
	require.NoError(t, err)
	require.Empty(t, diff)
	t.Logf("reset in %v (spare: %v)", res.Duration, res.Spare)

	// The used sandbox is removed, and with Close the new one and its
	// spare: nothing of the environment is left on the engine.
	ofTask := func() []string { return taskSandboxes(t, c, inst.InstanceID) }
	require.Eventually(t, func() bool { return !slices.Contains(ofTask(), old.ID()) }, time.Minute, 100*time.Millisecond, "the used sandbox is removed")
	require.NoError(t, env.Close())
	// A pod may take a moment to go after its deletion.
	require.Eventually(t, func() bool { return len(ofTask()) == 0 }, time.Minute, 250*time.Millisecond, "Close leaves no sandbox of the task")
}

// Task sandboxes carry the evaluator's run label, one value per Tasks,
// and the owner label, so that `eval prune --run_id` finds one program's
// and the sweep of a dead owner's finds them.
func TestTaskSandboxLabels(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	ctx := context.Background()
	a, b := newTasks(t, d, c), newTasks(t, d, c)
	ea, err := a.Start(ctx, d.rows[0].InstanceID)
	require.NoError(t, err)
	defer ea.Close()
	eb, err := b.Start(ctx, d.rows[0].InstanceID)
	require.NoError(t, err)
	defer eb.Close()
	la, lb := ea.Sandbox().Spec().Labels, eb.Sandbox().Spec().Labels
	require.NotEmpty(t, la[swebench.LabelRun])
	require.NotEqual(t, la[swebench.LabelRun], lb[swebench.LabelRun], "each Tasks has a run label of its own")
	require.Equal(t, d.rows[0].InstanceID, la[swebench.LabelInstance])
	objs, err := c.List(ctx, sandbox.ListRequest{Labels: map[string]string{swebench.LabelRun: la[swebench.LabelRun]}})
	require.NoError(t, err)
	var ids []string
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			ids = append(ids, o.ID)
			require.NotEmpty(t, o.Labels[sandbox.LabelOwner], "the owner label")
		}
	}
	require.Equal(t, []string{ea.Sandbox().ID()}, ids, "the run label finds this Tasks' sandbox only")
}
