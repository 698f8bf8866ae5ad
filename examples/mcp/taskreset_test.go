package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
)

// TestTaskResetForgets: over MCP, an agent that made the fix, took its
// diff (which once wrote the fix into git's object store), committed it
// and stashed it, then reset the session, finds nothing of it in the next
// rollout: no dangling object, no commit, reflog, stash or note, no object
// holding the fix's line, and an empty diff.
func TestTaskResetForgets(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	s := startHTTP(t, baseArgs(c, "--token", testToken, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"),
		"--repos", demo.Repos, "--eval-timeout", "20s"))
	cs, err := connectHTTP(t, s, testToken, nil)
	require.NoError(t, err)
	row := demo.Rows[0]
	gold, _ := row.Instance["patch"].(string)
	var line string
	for _, l := range strings.Split(gold, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") && strings.TrimSpace(l) != "+" {
			line = strings.TrimPrefix(l, "+")
			break
		}
	}
	require.NotEmpty(t, line)
	exec := func(session, cmd string) runOutput {
		out, _ := callOK[runOutput](t, cs, "session_exec", map[string]any{"session": session, "command": cmd})
		require.Equal(t, "ok", out.Status, "%s: %s", cmd, out.Stderr)
		return out
	}

	st, _ := callOK[taskStartOut](t, cs, "swebench_task_start", map[string]any{"instance_id": row.ID})
	patch := scriptedAgent(t, cs, st.Session, gold)
	require.NotEmpty(t, patch)
	exec(st.Session, `git -c user.email=a@b -c user.name=a commit -qam fix && git stash list >/dev/null &&
		git -c user.email=a@b -c user.name=a notes add -m fix && echo again >> README.md &&
		git -c user.email=a@b -c user.name=a stash -q`)
	callOK[taskResetOut](t, cs, "swebench_task_reset", map[string]any{"session": st.Session})

	out := exec(st.Session, `git fsck --lost-found --no-progress 2>&1 | grep -v '^Checking'; ls .git/lost-found 2>/dev/null;
		git reflog --all; git stash list; git notes list 2>/dev/null; git log --all --format=%H | grep -v "^$(git rev-parse HEAD)$"; true`)
	assert.Empty(t, strings.TrimSpace(out.Stdout), "the next rollout finds no trace of the fix in git")
	callOK[sessionWriteOut](t, cs, "session_write_file", map[string]any{"session": st.Session, "path": "/tmp/line", "content": line + "\n"})
	out = exec(st.Session, "git cat-file --batch-all-objects --batch | grep -c -F -f /tmp/line || true; rm -f /tmp/line")
	assert.Equal(t, "0", strings.TrimSpace(out.Stdout), "no git object holds the fix's line")
	d, _ := callOK[taskDiffOut](t, cs, "swebench_task_diff", map[string]any{"session": st.Session})
	assert.Empty(t, d.Patch, "the reset session is untouched")
	callOK[sessionCloseOut](t, cs, "swebench_task_close", map[string]any{"session": st.Session})
}
