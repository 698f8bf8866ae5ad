package main

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
)

// taskEgressProbe fetches argv[1] (allowed) and argv[2] (not allowed)
// through the proxy variables, then connects to argv[3]:argv[4] directly.
const taskEgressProbe = `import json, socket, sys, urllib.request
out = {}
def get(name, url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            out[name] = [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        out[name] = [e.code, e.headers.get('X-Swebox-Egress')]
    except OSError as e:
        out[name] = ['error', type(e).__name__]
get('allowed', sys.argv[1])
get('refused', sys.argv[2])
try:
    socket.create_connection((sys.argv[3], int(sys.argv[4])), timeout=5).close()
    out['direct'] = 'connected'
except OSError:
    out['direct'] = 'failed'
print(json.dumps(out, sort_keys=True))
`

// TestTaskEgress: a task session has no network unless swebench_task_start
// asks for hosts the server allows; then it reaches those through the
// proxy, and nothing else, before and after a reset, and in a sandbox that
// replaces one the reset could not verify.
func TestTaskEgress(t *testing.T) {
	c := engine(t)
	demo := swebenchtest.ExportDemo(t, swebenchtest.BuildEval(t))
	ip := testenv.HostIP(t)
	allowed := testenv.ServeOn(t, ip, "allowed body", false)
	other := testenv.ServeOn(t, ip, "must not be seen", false)
	_, port, _ := net.SplitHostPort(allowed.Listener.Addr().String())
	host := ip + ":" + port
	s := startStdio(t, baseArgs(c, "--egress_allow", host, "--dataset", filepath.Join(demo.Dir, "dataset.jsonl"), "--repos", demo.Repos), nil)
	id := demo.Rows[0].ID
	probe := func(t *testing.T, session string) string {
		t.Helper()
		callOK[sessionWriteOut](t, s.cs, "session_write_file", map[string]any{"session": session, "path": "/tmp/probe.py", "content": taskEgressProbe})
		out, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": session,
			"command": "python3 /tmp/probe.py " + allowed.URL + "/x " + other.URL + "/y " + ip + " " + port})
		require.Equal(t, "ok", out.Status, out.Stderr)
		return out.Stdout
	}

	assert.Contains(t, callErr(t, s.cs, "swebench_task_start", map[string]any{"instance_id": id, "egress": []string{"example.com"}}),
		"not allowed on this server")

	off, _ := callOK[taskStartOut](t, s.cs, "swebench_task_start", map[string]any{"instance_id": id})
	assert.Empty(t, off.Egress)
	assert.JSONEq(t, `{"allowed": ["error", "URLError"], "refused": ["error", "URLError"], "direct": "failed"}`, probe(t, off.Session),
		"no network by default")
	callOK[sessionCloseOut](t, s.cs, "swebench_task_close", map[string]any{"session": off.Session})

	on, _ := callOK[taskStartOut](t, s.cs, "swebench_task_start", map[string]any{"instance_id": id, "egress": []string{host}})
	assert.Equal(t, []string{host}, on.Egress)
	want := `{"allowed": [200, "allowed body"], "refused": [403, "refused"], "direct": "failed"}`
	assert.JSONEq(t, want, probe(t, on.Session), "the allowed host only, through the proxy; a direct connection has no route")
	// Each reset's new sandbox has the same egress, the first one's
	// started ahead and the second one's too.
	for i := 0; i < 2; i++ {
		callOK[taskResetOut](t, s.cs, "swebench_task_reset", map[string]any{"session": on.Session})
		assert.JSONEq(t, want, probe(t, on.Session), "after reset %d", i+1)
	}
	d, _ := callOK[taskDiffOut](t, s.cs, "swebench_task_diff", map[string]any{"session": on.Session})
	assert.Empty(t, d.Patch, "the launcher and the proxy's socket are outside /testbed")
	callOK[sessionCloseOut](t, s.cs, "swebench_task_close", map[string]any{"session": on.Session})
}
