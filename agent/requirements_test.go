package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/sandbox"
)

// buildWheel builds a one-module package name==version whose module sets
// VALUE, inside the test image with no network, and returns the directory
// holding the wheel.
func buildWheel(t testing.TB, c *sandbox.Client, dir, name, version string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "pkg", name), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "pkg", name, "__init__.py"), []byte(fmt.Sprintf("VALUE = %q\n", name+"-"+version)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "pkg", "setup.py"), []byte(fmt.Sprintf(
		"from setuptools import setup\nsetup(name=%q, version=%q, packages=[%q])\n", name, version, name)), 0o644))
	require.NoError(t, filepath.Walk(src, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o777) }))
	require.NoError(t, os.Chmod(dir, 0o777))
	res, err := c.Run(context.Background(), sandbox.Spec{
		Image: testImage(), Workspace: src, Policy: sandbox.AllowAll(),
		Mounts: []sandbox.Mount{{Source: dir, Target: "/wheels"}}, Relax: sandbox.Relax{WritableMounts: true},
	}, sandbox.ExecRequest{Cmd: []string{"python3", "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-build-isolation", "-w", "/wheels", "/workspace/pkg"}})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	return dir
}

func TestRequirementsOffline(t *testing.T) {
	m, c := newManager(t)
	wheels := buildWheel(t, c, "", "tinypkg", "1.0")
	reqs := agent.Requirements{Packages: []string{"tinypkg==1.0"}, WheelDir: wheels}
	code := "import tinypkg, pytest, sys\nprint(tinypkg.VALUE, sys.prefix)"

	first := runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.True(t, first.OK(), first.Stderr.String())
	assert.Equal(t, "tinypkg-1.0 /workspace/.venv\n", first.Stdout.String(), "the venv sees the image's pytest too")
	require.NotNil(t, first.Install)
	assert.False(t, first.Install.Cached)
	assert.Contains(t, first.Install.Packages, "tinypkg==1.0")

	second := runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.True(t, second.OK(), second.Stderr.String())
	assert.True(t, second.Install.Cached, "a repeated set installs once")
	assert.Equal(t, first.Install.Key, second.Install.Key)

	// A stateless run cannot change the cached environment.
	res := runPythonT(t, m, "open('/workspace/.venv/x', 'w')", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.NotNil(t, res.Error)
	assert.Equal(t, "OSError", res.Error.Type)

	missing := runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"not-there==2.0"}, WheelDir: wheels}}})
	assert.Equal(t, agent.KindInstall, missing.Kind)
	require.NotNil(t, missing.Install)
	assert.NotEqual(t, 0, missing.Install.ExitCode)
	assert.Contains(t, missing.Install.Stderr.String(), "not-there")
	assert.Contains(t, strings.Join(diagnose.Feedback(missing), "\n"), "Installing the requirements failed")
}

func TestSessionRequirements(t *testing.T) {
	m, c := newManager(t)
	ctx := context.Background()
	wheels := buildWheel(t, c, "", "alpha", "1.0")
	buildWheel(t, c, wheels, "beta", "2.0")

	s := createT(t, m, "env", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"alpha"}, WheelDir: wheels}}})
	res := sessionPythonT(t, s, "import alpha; print(alpha.VALUE)", agent.ExecOptions{})
	assert.Equal(t, "alpha-1.0\n", res.Stdout.String(), res.Stderr.String())
	inst, err := s.Install(ctx, agent.Requirements{Packages: []string{"beta==2.0"}, WheelDir: wheels})
	require.NoError(t, err)
	require.True(t, inst.OK(), inst.Stderr.String())
	res = sessionPythonT(t, s, "import alpha, beta; print(alpha.VALUE, beta.VALUE)", agent.ExecOptions{})
	assert.Equal(t, "alpha-1.0 beta-2.0\n", res.Stdout.String(), res.Stderr.String())
	assert.Equal(t, []string{"alpha", "beta==2.0"}, s.Info().Requirements)

	// The session owns its copy: it can install into it, the cache stays.
	res = sessionPythonT(t, s, "import os, alpha\nos.remove(alpha.__file__)\nopen(alpha.__file__, 'w').write('VALUE = \"changed\"')\nimport importlib; print(importlib.reload(alpha).VALUE)", agent.ExecOptions{})
	assert.Equal(t, "changed\n", res.Stdout.String(), res.Stderr.String())
	other := createT(t, m, "env2", agent.SessionOptions{})
	inst, err = other.Install(ctx, agent.Requirements{Packages: []string{"alpha", "beta==2.0"}, WheelDir: wheels})
	require.NoError(t, err)
	assert.True(t, inst.Cached, "the same set is not installed again")
	res = sessionPythonT(t, other, "import alpha; print(alpha.VALUE)", agent.ExecOptions{})
	assert.Equal(t, "alpha-1.0\n", res.Stdout.String(), "the cache was not changed through the first session's links")

	failed, err := s.Install(ctx, agent.Requirements{Packages: []string{"gamma"}, WheelDir: wheels})
	require.NoError(t, err, "a failed install is data")
	assert.False(t, failed.OK())
	_, err = m.Create(ctx, "broken", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Requirements: agent.Requirements{Packages: []string{"gamma"}, WheelDir: wheels}}})
	var ie *agent.InstallError
	require.ErrorAs(t, err, &ie)
	assert.ErrorIs(t, err, agent.ErrInstallFailed)
	_, err = m.Get(ctx, "broken")
	assert.ErrorIs(t, err, agent.ErrSessionNotFound)
}

// simpleIndex serves a PEP 503 index of the wheels in dir.
func simpleIndex(t testing.TB, dir string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{name}/", func(w http.ResponseWriter, r *http.Request) {
		entries, _ := os.ReadDir(dir)
		fmt.Fprintln(w, "<html><body>")
		for _, e := range entries {
			if strings.HasPrefix(strings.ToLower(e.Name()), r.PathValue("name")+"-") {
				b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				sum := sha256.Sum256(b)
				fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%s\">%s</a>\n", e.Name(), hex.EncodeToString(sum[:]), e.Name())
			}
		}
		fmt.Fprintln(w, "</body></html>")
	})
	mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(dir))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRequirementsFromIndexThroughEgress(t *testing.T) {
	m, c := newManager(t)
	wheels := buildWheel(t, c, "", "indexed", "3.1")
	srv := simpleIndex(t, wheels)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	reqs := agent.Requirements{
		Packages: []string{"indexed==3.1"},
		IndexURL: srv.URL + "/simple",
		Egress:   egress.Allowlist{Hosts: []string{host + ":" + port}},
		PipArgs:  []string{"--trusted-host", host},
	}
	// The program itself has no network: the index is out of reach.
	code := fmt.Sprintf("import indexed, os, urllib.request\nprint(indexed.VALUE, os.environ.get('HTTP_PROXY'))\ntry:\n    urllib.request.urlopen(%q, timeout=3)\nexcept OSError as e:\n    print('offline')\n", srv.URL+"/simple/indexed/")
	res := runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.True(t, res.OK(), "%s\n%s", res.Stderr.String(), res.Install.Stderr.String())
	assert.Equal(t, "indexed-3.1 None\noffline\n", res.Stdout.String())

	// Without the egress grant the install cannot reach the index.
	reqs.Egress = egress.Allowlist{Hosts: []string{"pypi.org"}}
	reqs.Packages = []string{"indexed>=3"}
	res = runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	assert.Equal(t, agent.KindInstall, res.Kind)
}
