package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
)

func TestFilesIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/data/remote.txt" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("from the web"))
	}))
	t.Cleanup(srv.Close)
	// The default client refuses the host's own addresses; this one is the
	// test server's.
	m, _ := newManager(t, agent.WithHTTPClient(srv.Client()))
	host := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(host, "single.txt"), []byte("from a host file"), 0o600))
	tree := filepath.Join(host, "tree")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "sub", "leaf.txt"), []byte("leaf"), 0o600))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(tree, "passwd")))

	files := []agent.File{
		{Name: "data/in.csv", Data: []byte("a,b\n1,2\n")},
		{HostPath: filepath.Join(host, "single.txt")},
		{HostPath: tree},
		{URL: srv.URL + "/data/remote.txt"},
		{Name: "run.sh", Data: []byte("#!/bin/sh\necho ran\n"), Mode: 0o755},
	}
	code := `import os
for root, dirs, names in sorted(os.walk('mounts')):
    for n in sorted(names):
        p = os.path.join(root, n)
        print(p, open(p).read().strip().replace('\n', '|'))
print(os.access('mounts/run.sh', os.X_OK))
open('mounts/data/in.csv', 'a').write('3,4\n')
`
	res := runPythonT(t, m, code, agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: files}})
	require.True(t, res.OK(), res.Stderr.String())
	assert.Equal(t, `mounts/remote.txt from the web
mounts/run.sh #!/bin/sh|echo ran
mounts/single.txt from a host file
mounts/data/in.csv a,b|1,2
mounts/tree/sub/leaf.txt leaf
True
`, res.Stdout.String(), "the host symlink is not copied; the code may change its inputs")

	_, err := m.RunPython(context.Background(), "", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{URL: srv.URL + "/missing"}}}})
	var fe *agent.FetchError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, http.StatusNotFound, fe.Status)
}

func TestFetchGuards(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, 100))
	}))
	t.Cleanup(srv.Close)
	type testCase struct {
		name string
		opts []agent.Option
		url  string
	}
	for _, tc := range []testCase{
		{name: "loopback refused by default", url: srv.URL + "/x"},
		{name: "metadata address refused", url: "http://169.254.169.254/latest/meta-data/"},
		{name: "not http", url: "file:///etc/passwd"},
		{name: "over the fetch limit", opts: []agent.Option{agent.WithHTTPClient(srv.Client()), agent.WithFetchLimit(10)}, url: srv.URL + "/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newManager(t, tc.opts...)
			_, err := m.RunPython(context.Background(), "", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{Name: "x", URL: tc.url}}}})
			require.ErrorIs(t, err, agent.ErrFetch)
		})
	}
}

func TestArtifacts(t *testing.T) {
	m, _ := newManager(t)
	code := `import base64, json, os
os.makedirs('output/sub', exist_ok=True)
json.dump({'ok': True}, open('output/report.json', 'w'))
open('output/plot.png', 'wb').write(base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='))
open('output/sub/notes', 'w').write('plain text notes')
open('output/big.bin', 'wb').write(b'\0' * 4096)
os.symlink('/etc/passwd', 'output/passwd')
os.symlink('..', 'output/up')
`
	res := runPythonT(t, m, code, agent.RunOptions{})
	require.True(t, res.OK(), res.Stderr.String())
	type want struct{ path, name, mime string }
	var got []want
	for _, a := range res.Artifacts {
		got = append(got, want{a.Path, a.Name, a.MIME})
		assert.Equal(t, a.Size, int64(len(a.Data)))
	}
	assert.Equal(t, []want{
		{"big.bin", "big.bin", "application/octet-stream"},
		{"plot.png", "plot.png", "image/png"},
		{"report.json", "report.json", "application/json"},
		{"sub/notes", "notes", "text/plain; charset=utf-8"},
	}, got)
	assert.Equal(t, 2, res.ArtifactsSkipped, "both symlinks are skipped, never followed")
	assert.JSONEq(t, `{"ok": true}`, string(res.Artifacts[2].Data))

	capped := runPythonT(t, m, code, agent.RunOptions{Artifacts: agent.ArtifactOptions{MaxFiles: 3, MaxBytes: 100}})
	require.Len(t, capped.Artifacts, 3)
	assert.Equal(t, 1, capped.ArtifactsDropped)
	assert.Nil(t, capped.Artifacts[0].Data, "big.bin is over the byte cap")
	assert.Equal(t, int64(4096), capped.Artifacts[0].Size)
	assert.NotNil(t, capped.Artifacts[1].Data)

	// An output/ that is a symlink to a host-visible path is not read.
	escaped := runPythonT(t, m, "import os, shutil\nshutil.rmtree('output')\nos.symlink('/etc', 'output')", agent.RunOptions{})
	require.True(t, escaped.OK(), escaped.Stderr.String())
	assert.Empty(t, escaped.Artifacts)
	assert.Equal(t, 1, escaped.ArtifactsSkipped)

	off := runPythonT(t, m, code, agent.RunOptions{Artifacts: agent.ArtifactOptions{Disabled: true}})
	assert.Empty(t, off.Artifacts)
}

func TestSessionFiles(t *testing.T) {
	m, _ := newManager(t)
	s := createT(t, m, "files", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Files: []agent.File{{Name: "a.txt", Data: []byte("at create")}}}})
	require.NoError(t, s.AddFiles(context.Background(), agent.File{Name: "b.txt", Data: []byte("added")}))
	// A symlink the program plants in mounts/ does not redirect later writes.
	res := sessionPythonT(t, s, "import os\nos.symlink('/tmp', 'mounts/dir')\nprint(open('mounts/a.txt').read(), open('mounts/b.txt').read(), open('mounts/c.txt').read())", agent.ExecOptions{Files: []agent.File{{Name: "c.txt", Data: []byte("per call")}}})
	assert.Equal(t, "at create added per call\n", res.Stdout.String(), res.Stderr.String())
	err := s.AddFiles(context.Background(), agent.File{Name: "dir/escape.txt", Data: []byte("x")})
	require.Error(t, err, "writing through a symlink that leaves mounts/ is refused")
}
