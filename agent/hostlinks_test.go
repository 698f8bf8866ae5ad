package agent_test

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
)

// writeWheel writes a pure-Python wheel name==1.0 holding files (path ->
// content) into dir, with the RECORD pip expects.
func writeWheel(t testing.TB, dir, name string, files map[string]string) {
	t.Helper()
	info := name + "-1.0.dist-info/"
	files[info+"METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"
	files[info+"WHEEL"] = "Wheel-Version: 1.0\nGenerator: swebox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var record strings.Builder
	for p, c := range files {
		sum := sha256.Sum256([]byte(c))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(c))
	}
	record.WriteString(info + "RECORD,,\n")
	files[info+"RECORD"] = record.String()
	f, err := os.Create(filepath.Join(dir, name+"-1.0-py3-none-any.whl"))
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for p, c := range files {
		w, err := zw.Create(p)
		require.NoError(t, err)
		_, err = w.Write([]byte(c))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// linkPlantingWheel writes a wheel whose .pth file runs code in every
// Python of the environment: when the install's pip freeze exits, it
// replaces /workspace/.venv/<name> by a symlink to target for each pair of
// links — what any package a model picks can do.
func linkPlantingWheel(t testing.TB, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var pairs []string
	for name, target := range links {
		pairs = append(pairs, fmt.Sprintf("(%q, %q)", name, target))
	}
	hook := `import atexit, os, sys

def plant():
    if "freeze" not in sys.argv:
        return
    sys.stdout.flush()
    for name, target in [` + strings.Join(pairs, ", ") + `]:
        p = "/workspace/.venv/" + name
        os.symlink(target, p + ".link")
        os.replace(p + ".link", p)

atexit.register(plant)
`
	writeWheel(t, dir, "linkplant", map[string]string{
		"linkplant_hook.py": hook,
		"linkplant.pth":     "import linkplant_hook\n",
	})
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// TestInstallLinksNeverFollowed runs the attack of an installed package on
// the host: it links the install's freeze list to a host secret and its
// metadata file to another host file. The host must neither return the
// secret nor write to the other file, and a link in the environment cache
// must never be read.
func TestInstallLinksNeverFollowed(t *testing.T) {
	host := t.TempDir()
	secret := filepath.Join(host, "secret.txt")
	victim := filepath.Join(host, "victim.txt")
	require.NoError(t, os.WriteFile(secret, []byte("host-secret==1.0\n"), 0o600))
	require.NoError(t, os.WriteFile(victim, []byte("victim\n"), 0o600))
	wheels := linkPlantingWheel(t, map[string]string{".swebox-freeze.txt": secret, ".swebox-env.json": victim})
	envs := t.TempDir()
	m, _ := newManager(t, agent.WithEnvCache(envs))
	reqs := agent.Requirements{Packages: []string{"linkplant==1.0"}, WheelDir: wheels}

	first := runPythonT(t, m, "print('ok')", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.NotNil(t, first.Install)
	require.True(t, first.Install.OK(), first.Install.Stderr.String())
	assert.NotContains(t, first.Install.Packages, "host-secret==1.0", "the host read its own file through the sandbox's link")
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "victim\n", string(got), "the host wrote through the sandbox's link")

	// A link left in the cache (as code before this fix stored it) is
	// never read: the environment is built again instead.
	key := first.Install.Key
	require.NoError(t, os.WriteFile(victim, []byte(`{"key":"`+key+`","packages":["stolen==1.0"]}`), 0o600))
	meta := filepath.Join(envs, key, ".swebox-env.json")
	_ = os.Remove(meta)
	require.NoError(t, os.Symlink(victim, meta))
	second := runPythonT(t, m, "print('ok')", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Requirements: reqs}})
	require.NotNil(t, second.Install)
	require.True(t, second.Install.OK(), second.Install.Stderr.String())
	assert.NotContains(t, second.Install.Packages, "stolen==1.0", "the host read the cache's link")
	assert.False(t, second.Install.Cached, "an environment whose metadata is a link is not a cached one")
	fi, err := os.Lstat(meta)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the rebuilt environment's metadata is a file")
	assert.Equal(t, "ok\n", second.Stdout.String())
}

// A session's sandbox plants a link and a FIFO where the host is about to
// write input files. The host replaces them with files of its own: it
// neither writes through the link nor hands the data to whoever reads the
// FIFO (nor blocks on it).
func TestAddFilesReplacesPlantedFiles(t *testing.T) {
	m, _ := newManager(t)
	s := createT(t, m, "plant", agent.SessionOptions{})
	res, err := s.RunShell(context.Background(),
		"echo keep > /workspace/output/keep.txt && ln -s ../output/keep.txt /workspace/mounts/link.txt && "+
			"mkfifo /workspace/mounts/fifo.txt && (cat /workspace/mounts/fifo.txt > /workspace/output/stolen.txt &)", agent.ExecOptions{})
	require.NoError(t, err)
	require.True(t, res.OK(), res.Stderr.String())
	require.NoError(t, s.AddFiles(context.Background(),
		agent.File{Name: "fifo.txt", Data: []byte("secret\n")}, agent.File{Name: "link.txt", Data: []byte("data\n")}))
	out := sessionShellT(t, s, "cat /workspace/output/keep.txt; for f in /workspace/mounts/*.txt; do stat -c '%n %F' $f; cat $f; done; cat /workspace/output/stolen.txt 2>/dev/null; true")
	assert.Equal(t, "keep\n/workspace/mounts/fifo.txt regular file\nsecret\n/workspace/mounts/link.txt regular file\ndata\n", out)
}

func sessionShellT(t testing.TB, s *agent.Session, script string) string {
	t.Helper()
	res, err := s.RunShell(context.Background(), script, agent.ExecOptions{})
	require.NoError(t, err)
	require.True(t, res.OK(), res.Stderr.String())
	return res.Stdout.String()
}
