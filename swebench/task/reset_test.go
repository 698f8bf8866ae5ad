package task_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/task"
)

// fingerprint is what the sandbox user can observe of env's sandbox (see
// testdata/fingerprint.py): mounts, every entry under each read-write
// mount with its content hash (.git and its object store included),
// processes, environment, System V IPC objects, identity and limits.
func fingerprint(t *testing.T, env *task.Env) string {
	t.Helper()
	script, err := os.ReadFile("testdata/fingerprint.py")
	require.NoError(t, err)
	r, err := env.Sandbox().Exec(context.Background(), sandbox.ExecRequest{
		Cmd: []string{"/usr/bin/python3", "-I", "-S", "-c", string(script)}, WorkingDir: "/", OutputLimit: 16 << 20,
	})
	require.NoError(t, err)
	require.True(t, r.Success(), "fingerprint: exit %d\n%s", r.ExitCode, r.Stderr.String())
	require.False(t, r.Stdout.Truncated)
	return r.Stdout.String()
}

// requireSameState fails, listing the lines only one of them has, when
// got differs from want.
func requireSameState(t *testing.T, want, got, what string) {
	t.Helper()
	if want == got {
		return
	}
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var d []string
	for _, l := range strings.Split(want+"\n"+got, "\n") {
		switch n := count[l]; {
		case n > 0:
			d = append(d, "- "+l)
		case n < 0:
			d = append(d, "+ "+l)
		}
		delete(count, l)
	}
	if len(d) == 0 {
		t.Fatalf("%s has the lines of a fresh Start in another order:\n%s\n---\n%s", what, want, got)
	}
	t.Fatalf("%s differs from a fresh Start (- fresh only, + %s only):\n%s", what, what, strings.Join(d, "\n"))
}

// agentShell runs script in env as the agent does and returns its stdout;
// the script must succeed.
func agentShell(t *testing.T, env *task.Env, script string) string {
	t.Helper()
	return shell(t, env.Sandbox(), script)
}

// hostile is a rollout that tries to leave something for the next one, or
// to steer the diff.
type hostile struct {
	name string
	// attack runs the rollout; it may check what the agent sees of its
	// own attack (a diff the agent's git setup did not steer).
	attack func(t *testing.T, env *task.Env, inst dataset.Instance)
	// after checks, in the reset environment, what the attack left for
	// the next rollout to find, beyond the fingerprint.
	after func(t *testing.T, env *task.Env, inst dataset.Instance)
}

// applyGold makes the gold patch's change as the agent would, keeping a
// copy of the patch where the rollout can find it again.
const applyGold = `cat > /tmp/gold.diff && git apply /tmp/gold.diff && mkdir -p .git/stash-of-agent && cp /tmp/gold.diff .git/stash-of-agent/`

func gold(t *testing.T, env *task.Env, inst dataset.Instance) {
	t.Helper()
	r, err := env.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", applyGold}, Stdin: strings.NewReader(inst.Patch)})
	require.NoError(t, err)
	require.True(t, r.Success(), r.Stderr.String())
}

// requireDiffIsChange asserts that Diff is the gold patch's change plus
// the files named in also, and that no program the agent planted ran
// (its marker file is absent).
func requireDiffIsChange(t *testing.T, env *task.Env, inst dataset.Instance, also ...string) {
	t.Helper()
	diff, err := env.Diff(context.Background())
	require.NoError(t, err)
	for _, f := range append(patchFiles(inst.Patch), also...) {
		require.Contains(t, diff, "diff --git a/"+f+" b/"+f, "the diff has the agent's change to %s", f)
	}
	require.Equal(t, len(patchFiles(inst.Patch))+len(also), strings.Count(diff, "diff --git "), "only the agent's files:\n%s", diff)
	require.Empty(t, agentShell(t, env, "ls /tmp/planted-ran 2>/dev/null; true"), "a program the agent planted ran while the diff was taken")
}

// patchFiles lists the files a patch changes.
func patchFiles(patch string) []string {
	var files []string
	for _, l := range strings.Split(patch, "\n") {
		if rest, ok := strings.CutPrefix(l, "diff --git a/"); ok {
			files = append(files, strings.SplitN(rest, " ", 2)[0])
		}
	}
	return files
}

// planted is a program that records that it ran and puts the fix back.
const planted = `mkdir -p /tmp/evil && cat > /tmp/evil/run <<'EOF'
#!/bin/sh
touch /tmp/planted-ran
cd /testbed && git apply /testbed/.git/stash-of-agent/gold.diff 2>/dev/null
cat
EOF
chmod +x /tmp/evil/run && cp /tmp/evil/run .git/evil-run`

var hostileRollouts = []hostile{{
	// The first attack: the agent's files reach git's object
	// store (through the diff, a commit, the stash, notes), and the next
	// rollout reads them back.
	name: "objects, reflog, stash and notes",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		requireDiffIsChange(t, env, inst)
		agentShell(t, env, `git -c user.email=a@b -c user.name=a stash -q && git stash apply -q &&
			git -c user.email=a@b -c user.name=a commit -qam fix && git branch keep &&
			git -c user.email=a@b -c user.name=a notes add -m "fix in $(git rev-parse HEAD)" &&
			git -c user.email=a@b -c user.name=a tag -a v-fix -m fix && git pack-refs --all && git reset -q --hard HEAD~1`)
	},
	after: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		require.Empty(t, agentShell(t, env, "git fsck --lost-found --no-progress 2>&1 | grep -v '^Checking' ; true"), "no dangling objects")
		require.Empty(t, agentShell(t, env, "ls .git/lost-found 2>/dev/null; git stash list; git notes list 2>/dev/null; git tag; git branch --list keep; true"))
		require.Equal(t, "same\n", agentShell(t, env, `test "$(git log --all --format=%H)" = "$(git log --format=%H `+inst.BaseCommit+`)" && echo same`), "no commit after base_commit")
		r := agentShell(t, env, `git cat-file --batch-all-objects --batch 2>/dev/null | grep -c -F -f /dev/stdin <<'EOF' || true
`+firstAddedLine(inst.Patch)+`
EOF`)
		require.Equal(t, "0", strings.TrimSpace(r), "no object holds the fix's line")
	},
}, {
	// The skip-worktree bit hides a change from git's view of the tree.
	name: "skip-worktree bits and a stale index",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		agentShell(t, env, `for f in $(git diff --name-only); do git update-index --skip-worktree "$f"; done
			mkdir -p .git/swebox-task && cp .git/index .git/swebox-task/index && cp .git/index .git/swebox-task/tree-index`)
		require.Empty(t, agentShell(t, env, "git status --porcelain"), "the bits hide the change from git status")
		requireDiffIsChange(t, env, inst)
	},
	after: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		sub, err := env.Submit(context.Background(), nil)
		require.NoError(t, err)
		require.Equal(t, swebench.OutcomeEmptyPatch, sub.Result.Outcome, "an untouched environment submits nothing")
	},
}, {
	// The agent's git configuration: fsmonitor, hooks, attribute filters
	// and diff drivers, include files, core.worktree and alternates. None
	// may run or redirect the diff, in this rollout or the next.
	name: "git configuration, hooks and drivers",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		agentShell(t, env, planted+` &&
			mkdir -p .git/hooks /tmp/fake/.git && for h in pre-commit post-index-change post-checkout reference-transaction; do cp /tmp/evil/run .git/hooks/$h; done &&
			git config core.fsmonitor /tmp/evil/run && git config core.hooksPath /tmp/evil &&
			git config filter.evil.clean /tmp/evil/run && git config filter.evil.smudge /tmp/evil/run &&
			git config diff.evil.textconv /tmp/evil/run && git config diff.evil.command /tmp/evil/run && git config diff.external /tmp/evil/run &&
			printf '* filter=evil diff=evil\n' > .git/info/attributes &&
			printf '[core]\n\tfsmonitor = /tmp/evil/run\n' > /tmp/evil/inc && git config include.path /tmp/evil/inc &&
			printf '[core]\n\tfsmonitor = /tmp/evil/run\n' > $HOME/.gitconfig &&
			echo /tmp/fake/.git/objects > .git/objects/info/alternates &&
			git config core.worktree /tmp/fake && git config core.untrackedCache true`)
		requireDiffIsChange(t, env, inst)
	},
	after: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		diff, err := env.Diff(context.Background())
		require.NoError(t, err)
		require.Empty(t, diff, "the reset environment is untouched")
		require.Empty(t, agentShell(t, env, "ls /tmp/planted-ran 2>/dev/null; git config --get core.fsmonitor; true"))
	},
}, {
	// A .gitattributes file the agent adds is its change, and no driver
	// it names runs (none is configured for the diff).
	name: "gitattributes in the tree",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		agentShell(t, env, planted+` && printf '* filter=evil diff=evil merge=evil\n' > .gitattributes && git config filter.evil.clean /tmp/evil/run && git config filter.evil.required true`)
		requireDiffIsChange(t, env, inst, ".gitattributes")
	},
}, {
	// Every other place the sandbox user can write: /tmp and HOME (shell
	// and Python start-up files, user site-packages), /dev/shm, .git's
	// own files, a linked worktree, System V IPC objects, an environment
	// file in the repository.
	name: "writable places",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		agentShell(t, env, `echo fix > /dev/shm/fix && echo fix > /tmp/fix && echo 'export FIX=1' >> $HOME/.bashrc && echo 'export FIX=1' > $HOME/.profile &&
			site=$(python3 -c 'import site; print(site.getusersitepackages())') && mkdir -p "$site" &&
			echo 'import os; os.environ["FIX"] = "1"' > "$site/usercustomize.py" && echo 'import os' > "$site/fix.pth" &&
			echo fix > .git/description && echo '*.fix' >> .git/info/exclude && echo fix > .git/FETCH_HEAD && echo fix > .git/ORIG_HEAD &&
			git -c user.email=a@b -c user.name=a worktree add -q /tmp/wt && echo FIX=1 > .env &&
			(ipcmk -M 4096 && ipcmk -Q && ipcmk -S 1) >/dev/null`)
		require.NotEqual(t, "0", strings.TrimSpace(agentShell(t, env, "grep -vc key /proc/sysvipc/shm || true")), "the agent made a shared memory segment")
	},
	after: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		require.Empty(t, agentShell(t, env, "ls -A /dev/shm; ls -d /tmp/wt /tmp/fix 2>/dev/null; git worktree list | grep -v '^/testbed ' ; true"))
	},
}, {
	// Processes that try to outlive the rollout: a daemon that ignores
	// TERM and HUP and keeps writing the fix back, and one that sleeps.
	name: "surviving processes",
	attack: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		gold(t, env, inst)
		agentShell(t, env, `cp .git/stash-of-agent/gold.diff /tmp/keep.diff &&
			setsid sh -c 'trap "" TERM HUP INT; while :; do (cd /testbed && git apply /tmp/keep.diff 2>/dev/null); echo x > /dev/shm/alive; sleep 0.2; done' swebox-survivor </dev/null >/dev/null 2>&1 &
			nohup setsid sleep 100000 >/dev/null 2>&1 &
			true`)
	},
	after: func(t *testing.T, env *task.Env, inst dataset.Instance) {
		require.Empty(t, agentShell(t, env, "sleep 1; ls /dev/shm; git status --porcelain; "+leftoverProbe))
	},
}}

// firstAddedLine is the first line a patch adds, without its "+".
func firstAddedLine(patch string) string {
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") && strings.TrimSpace(l) != "+" {
			return strings.TrimPrefix(l, "+")
		}
	}
	return patch
}

// TestResetEqualsFreshStart runs hostile rollouts one after the other in
// one environment, each followed by Reset, and compares a fingerprint of
// everything the sandbox user can observe (testdata/fingerprint.py) with
// that of a fresh Start of the same task; each rollout's own checks then
// look for what it tried to leave. Two fresh Starts are compared first, so
// that the fingerprint leaves out only what differs between any two
// sandboxes started alike.
func TestResetEqualsFreshStart(t *testing.T) {
	resetEqualsFreshStart(t, testenv.Client(t))
}

func resetEqualsFreshStart(t *testing.T, c *sandbox.Client) {
	d := loadDemo(t)
	tasks := newTasks(t, d, c)
	ctx := context.Background()
	inst := d.rows[0]
	ref, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	fresh := fingerprint(t, ref)
	require.NoError(t, ref.Close())
	require.Contains(t, fresh, "entry /testbed/.git/objects/", "the fingerprint covers git's object store")

	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer env.Close()
	requireSameState(t, fresh, fingerprint(t, env), "a second fresh Start")
	for i, h := range hostileRollouts {
		t.Run(h.name, func(t *testing.T) {
			before := env.Sandbox().ID()
			h.attack(t, env, inst)
			res, err := env.Reset(ctx)
			require.NoError(t, err)
			require.NotEqual(t, before, env.Sandbox().ID(), "Reset hands over a new sandbox")
			// From the second Reset on, the sandbox handed over is the
			// spare, which existed while this hostile rollout ran.
			require.Equal(t, i > 0, res.Spare, "the sandbox was started ahead")
			requireSameState(t, fresh, fingerprint(t, env), "the environment after Reset")
			if h.after != nil {
				h.after(t, env, inst)
			}
			t.Logf("reset in %v (spare: %v)", res.Duration, res.Spare)
		})
	}
}

// TestResetSpares: an environment never reset keeps no spare; once reset
// it keeps one, which the next Reset hands over; with Config.NoSpare every
// Reset starts its own and no second sandbox ever runs.
func TestResetSpares(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	ctx := context.Background()
	inst := d.rows[0]
	count := func() int { return len(taskSandboxes(t, c, inst.InstanceID)) }
	for _, noSpare := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoSpare=%v", noSpare), func(t *testing.T) {
			tasks, err := task.New(ctx, task.Config{Eval: evalConfig(d, c), Dir: t.TempDir(), NoSpare: noSpare})
			require.NoError(t, err)
			defer func() { require.NoError(t, tasks.Close()) }()
			env, err := tasks.Start(ctx, inst.InstanceID)
			require.NoError(t, err)
			require.Equal(t, 1, count(), "Start starts one sandbox")
			for i := 0; i < 3; i++ {
				res, err := env.Reset(ctx)
				require.NoError(t, err)
				require.Equal(t, !noSpare && i > 0, res.Spare, "reset %d", i+1)
				want := 2
				if noSpare {
					want = 1
				}
				require.Eventually(t, func() bool { return count() == want }, time.Minute, 100*time.Millisecond,
					"after reset %d: the environment's sandbox and its spare, the used one removed", i+1)
			}
			require.NoError(t, env.Close())
			require.Equal(t, 0, count(), "Close removes the sandbox and the spare")
		})
	}
}
