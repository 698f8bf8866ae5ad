package agent_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/internal/testenv"
)

const egressProbe = `import json, socket, ssl, sys, urllib.request
out = {}
def get(name, url, **kw):
    try:
        with urllib.request.urlopen(url, timeout=10, **kw) as r:
            out[name] = (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        out[name] = (e.code, e.headers.get('X-Swebox-Egress'))
    except OSError as e:
        out[name] = ('error', type(e).__name__)
def direct(name, host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        out[name] = 'connected'
    except OSError as e:
        out[name] = 'failed'
get('allowed', sys.argv[1])
get('allowed_tls', sys.argv[2], context=ssl._create_unverified_context())
get('refused', sys.argv[3])
get('metadata', 'http://169.254.169.254/latest/meta-data/')
get('unlisted_name', 'http://example.invalid/')
direct('direct', sys.argv[4], int(sys.argv[5]))
print(json.dumps(out, sort_keys=True))
`

func TestEgressAllowlist(t *testing.T) {
	var logs testenv.SyncBuffer
	m, _ := newManager(t, agent.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ip := testenv.HostIP(t)
	allowed := testenv.ServeOn(t, ip, "allowed body", false)
	allowedTLS := testenv.ServeOn(t, ip, "tls body", true)
	refused := testenv.ServeOn(t, "127.0.0.1", "must not be seen", false)
	_, aport, _ := net.SplitHostPort(allowed.Listener.Addr().String())
	_, tport, _ := net.SplitHostPort(allowedTLS.Listener.Addr().String())

	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "swebox-egress-*"))
	res, err := m.RunPython(context.Background(), egressProbe, agent.RunOptions{
		SandboxOptions: agent.SandboxOptions{
			Egress: egress.Allowlist{Hosts: []string{ip + ":" + aport, ip + ":" + tport, "169.254.169.254"}},
		},
		Args: []string{allowed.URL + "/x", allowedTLS.URL + "/y", refused.URL + "/z", ip, aport},
	})
	require.NoError(t, err)
	require.True(t, res.OK(), res.Stderr.String())
	assert.JSONEq(t, `{
		"allowed": [200, "allowed body"],
		"allowed_tls": [200, "tls body"],
		"refused": [403, "refused"],
		"metadata": [403, "refused"],
		"unlisted_name": [403, "refused"],
		"direct": "failed"
	}`, res.Stdout.String(), "a direct connection, bypassing the proxy, has no route")

	type ev struct {
		host    string
		allowed bool
	}
	var got []ev
	for _, e := range res.Egress {
		got = append(got, ev{e.Host, e.Allowed})
		if !e.Allowed {
			assert.NotEmpty(t, e.Reason)
		}
	}
	assert.ElementsMatch(t, []ev{{ip, true}, {ip, true}, {"127.0.0.1", false}, {"169.254.169.254", false}, {"example.invalid", false}}, got)
	assert.Contains(t, logs.String(), "egress refused")
	assert.Contains(t, logs.String(), "host=169.254.169.254")
	joined := strings.Join(diagnose.Feedback(res), "\n")
	assert.Contains(t, joined, "127.0.0.1")

	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "swebox-egress-*"))
	assert.Subset(t, before, after, "the proxy's socket directory is removed")
}

func TestEgressOffByDefault(t *testing.T) {
	m, _ := newManager(t)
	ip := testenv.HostIP(t)
	srv := testenv.ServeOn(t, ip, "x", false)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := runPythonT(t, m, egressProbe, agent.RunOptions{Args: []string{srv.URL, srv.URL, srv.URL, ip, port}})
	require.True(t, res.OK(), res.Stderr.String())
	assert.JSONEq(t, `{
		"allowed": ["error", "URLError"],
		"allowed_tls": ["error", "URLError"],
		"refused": ["error", "URLError"],
		"metadata": ["error", "URLError"],
		"unlisted_name": ["error", "URLError"],
		"direct": "failed"
	}`, res.Stdout.String())
	assert.Empty(t, res.Egress)
}

func TestSessionEgress(t *testing.T) {
	m, _ := newManager(t)
	ip := testenv.HostIP(t)
	srv := testenv.ServeOn(t, ip, "session body", false)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	s := createT(t, m, "net", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Egress: egress.Allowlist{Hosts: []string{ip + ":" + port}}}})
	code := "import sys, urllib.request\nprint(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
	for i := 0; i < 2; i++ {
		res := sessionPythonT(t, s, code, agent.ExecOptions{Args: []string{srv.URL}})
		assert.Equal(t, "session body\n", res.Stdout.String(), res.Stderr.String())
		require.Len(t, res.Egress, 1)
		assert.True(t, res.Egress[0].Allowed)
	}
	// Tools that read the proxy variables work too (pip and curl do).
	res, err := s.RunShell(context.Background(), "env | grep -c '^HTTPS*_PROXY=http://127.0.0.1:'", agent.ExecOptions{})
	require.NoError(t, err)
	assert.Equal(t, "2\n", res.Stdout.String())
}
