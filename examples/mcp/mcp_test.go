package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json")

// TestToolsListGolden pins the tools' names, descriptions and schemas: what
// every client and model sees.
func TestToolsListGolden(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c), nil)
	res, err := s.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	type tool struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		InputSchema  any    `json:"inputSchema"`
		OutputSchema any    `json:"outputSchema,omitempty"`
	}
	var got []tool
	for _, tl := range res.Tools {
		got = append(got, tool{tl.Name, tl.Description, tl.InputSchema, tl.OutputSchema})
	}
	b, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, append(b, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.JSONEq(t, string(want), string(b))

	var names []string
	for _, tl := range got {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"run_python", "run_shell", "run_tests", "session_create", "session_exec",
		"session_write_file", "session_read_file", "session_list", "session_close", "job_status", "job_cancel",
		"swebench_evaluate", "swebench_grade_log", "swebench_task_list", "swebench_task_start", "swebench_task_diff",
		"swebench_task_submit", "swebench_task_reset", "swebench_task_close"}, names)
}

// pngCode writes an 8x8 red PNG to output/plot.png with the standard
// library only (the image has no plotting package).
const pngCode = `
import os, struct, zlib
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
raw = b''.join(b'\x00' + bytes([255, 0, 0] * 8) for _ in range(8))
png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 8, 8, 2, 0, 0, 0))
       + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
os.makedirs('output', exist_ok=True)
open('output/plot.png', 'wb').write(png)
open('output/notes.txt', 'w').write('hello notes')
open('output/big.txt', 'w').write('x' * 20000)
print('made a plot')
`

func TestRunPythonOverStdio(t *testing.T) {
	c := engine(t)
	// --pool 0: the containers counted below are the calls' own; the
	// pool's are TestPoolServesRunsAndIsCleanedAfterAKill's.
	s := startStdio(t, baseArgs(c, "--artifact_limit", "8KiB", "--pool", "0"), nil)

	t.Run("artifacts", func(t *testing.T) {
		out, res := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": pngCode})
		assert.Equal(t, "ok", out.Status)
		assert.Equal(t, "made a plot\n", out.Stdout)
		assert.EqualValues(t, defaultMemory, out.MemoryLimit, "the server's memory limit, not the sandbox package's")
		byPath := map[string]artifactInfo{}
		for _, a := range out.Artifacts {
			byPath[a.Path] = a
		}
		require.Len(t, byPath, 3, "%+v", out.Artifacts)
		assert.Equal(t, "image", byPath["plot.png"].ReturnedAs)
		assert.Equal(t, "resource", byPath["notes.txt"].ReturnedAs)
		assert.Equal(t, "link", byPath["big.txt"].ReturnedAs, "20000 bytes are over the 8 KiB inline cap")

		var img *mcp.ImageContent
		var emb *mcp.EmbeddedResource
		var link *mcp.ResourceLink
		for _, ct := range res.Content {
			switch v := ct.(type) {
			case *mcp.ImageContent:
				img = v
			case *mcp.EmbeddedResource:
				emb = v
			case *mcp.ResourceLink:
				link = v
			}
		}
		require.NotNil(t, img, "the PNG comes back as image content")
		assert.Equal(t, "image/png", img.MIMEType)
		cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
		require.NoError(t, err, "the image content is the PNG the program wrote")
		assert.Equal(t, 8, cfg.Width)
		require.NotNil(t, emb)
		assert.Equal(t, "hello notes", emb.Resource.Text)
		require.NotNil(t, link)
		rr, err := s.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		assert.Equal(t, strings.Repeat("x", 20000), rr.Contents[0].Text)
	})

	t.Run("exception", func(t *testing.T) {
		out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": "def f(d):\n    return d['k']\nf({})\n"})
		assert.Equal(t, "exception", out.Status)
		require.NotNil(t, out.Error)
		assert.Equal(t, "KeyError", out.Error.Type)
		assert.Equal(t, 2, out.Error.Line)
		assert.NotEmpty(t, out.Feedback)
	})

	t.Run("timeout capped by the server", func(t *testing.T) {
		out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": "import time\ntime.sleep(30)", "timeout_s": 1})
		assert.Equal(t, "timeout", out.Status)
		assert.Equal(t, 1.0, out.TimeoutS)
		out, _ = callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": "print(1)", "timeout_s": 1e6})
		assert.Equal(t, defaultTimeout.Seconds(), out.TimeoutS, "a timeout over the server's limit gets the limit")
	})

	t.Run("output cap", func(t *testing.T) {
		out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": "print('y' * 200000)"})
		assert.True(t, out.StdoutTruncated)
		assert.Less(t, len(out.Stdout), defaultOutputLimit+200)
	})

	t.Run("input files", func(t *testing.T) {
		out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{
			"code":  "print(open('mounts/in/data.txt').read(), open('mounts/b.bin','rb').read())",
			"files": []map[string]any{{"path": "in/data.txt", "content": "abc"}, {"path": "b.bin", "content_base64": "AAE="}},
		})
		assert.Equal(t, "abc b'\\x00\\x01'\n", out.Stdout)
	})

	t.Run("rejected inputs", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"parent path", map[string]any{"code": "1", "files": []map[string]any{{"path": "../../etc/x", "content": "a"}}}, "leaves /workspace"},
			{"absolute path", map[string]any{"code": "1", "files": []map[string]any{{"path": "/etc/x", "content": "a"}}}, "relative path"},
			{"file URL", map[string]any{"code": "1", "files": []map[string]any{{"path": "x", "url": "file:///etc/passwd"}}}, "http or https"},
			{"requirements without a source", map[string]any{"code": "1", "requirements": []string{"numpy"}}, "installs no packages"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assert.Contains(t, callErr(t, s.cs, "run_python", tc.args), tc.want)
			})
		}
	})

	t.Run("malformed arguments", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"wrong type", map[string]any{"code": "1", "timeout_s": "soon"}, "timeout_s"},
			{"missing field", map[string]any{"timeout_s": 1}, "code"},
			{"unknown field", map[string]any{"code": "1", "mounts": []string{"/:/host"}}, "mounts"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				assert.Contains(t, callErr(t, s.cs, "run_python", tc.args), tc.want)
			})
		}
	})

	// One log line per call, with the call's facts.
	lines := logLines(t, s.stderr.String())
	require.NotEmpty(t, lines)
	first := lines[0]
	assert.Equal(t, "run_python", first["tool"])
	assert.Equal(t, stdioOwner, first["client"])
	assert.EqualValues(t, 0, first["exit"])
	assert.Greater(t, first["bytes"], 100.0)
	assert.Contains(t, first, "duration_ms")
	assert.Zero(t, leftovers(t, c), "one-shot runs leave no container")
}

func TestRunShellAndTests(t *testing.T) {
	c := engine(t)
	logFile := filepath.Join(t.TempDir(), "calls.jsonl")
	s := startStdio(t, baseArgs(c, "--log_file", logFile), nil)
	defer func() {
		b, err := os.ReadFile(logFile)
		require.NoError(t, err)
		lines := logLines(t, string(b))
		assert.Len(t, lines, 5, "one line per call in --log_file")
		assert.Empty(t, logLines(t, s.stderr.String()), "none on stderr")
	}()

	out, _ := callOK[runOutput](t, s.cs, "run_shell", map[string]any{"script": "echo hi; id -u; exit 3"})
	assert.Equal(t, "exit", out.Status)
	assert.Equal(t, 3, out.ExitCode)
	assert.Equal(t, "hi\n1000\n", out.Stdout)
	assert.Contains(t, callErr(t, s.cs, "run_shell", map[string]any{"script": "true", "image": "alpine:latest"}), "not allowed")

	out, _ = callOK[runOutput](t, s.cs, "run_shell", map[string]any{"script": "python3 -c 'import urllib.request as u; u.urlopen(\"http://1.1.1.1\", timeout=3)'"})
	assert.NotEqual(t, 0, out.ExitCode, "no network: %s", out.Stderr)

	code := "def add(a, b):\n    print('PASSED ' * 50)\n    return a + b if a < 10 else 0\n"
	rep, _ := callOK[testOutput](t, s.cs, "run_tests", map[string]any{
		"code": code, "function": "add",
		"tests": []map[string]any{
			{"args": []any{2, 3}, "expected": 5},
			{"name": "big", "args": []any{20, 1}, "expected": 21},
			{"args": []any{"a", 1}, "expected_error": "TypeError"},
		},
	})
	assert.Equal(t, 2, rep.Passed)
	assert.Equal(t, 1, rep.Failed, "printing PASSED does not pass a case")
	assert.False(t, rep.AllPassed)
	require.Len(t, rep.Cases, 3)
	assert.False(t, rep.Cases[1].Passed)
	assert.Equal(t, "big", rep.Cases[1].Name)
	assert.NotEmpty(t, rep.Feedback)
	assert.Contains(t, callErr(t, s.cs, "run_tests", map[string]any{"code": code, "function": "add", "tests": []any{}}), "at least one case")
}

// writeWheel writes a pure-Python wheel tinypkg==1.0 into a new directory.
func writeWheel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	f, err := os.Create(filepath.Join(dir, "tinypkg-1.0-py3-none-any.whl"))
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, e := range [][2]string{
		{"tinypkg/__init__.py", "VALUE = 'tinypkg-1.0'\n"},
		{"tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{"tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: swebox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"tinypkg-1.0.dist-info/RECORD", "tinypkg/__init__.py,,\ntinypkg-1.0.dist-info/METADATA,,\ntinypkg-1.0.dist-info/WHEEL,,\ntinypkg-1.0.dist-info/RECORD,,\n"},
	} {
		w, err := zw.Create(e[0])
		require.NoError(t, err)
		_, err = w.Write([]byte(e[1]))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	require.NoError(t, os.Chmod(f.Name(), 0o644))
	return dir
}

func TestRequirementsFromWheelDir(t *testing.T) {
	c := engine(t)
	s := startStdio(t, baseArgs(c, "--wheel_dir", writeWheel(t)), nil)
	code := "import tinypkg\nprint(tinypkg.VALUE)"
	out, _ := callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": code, "requirements": []string{"tinypkg==1.0"}})
	require.Equal(t, "ok", out.Status, out.Stderr)
	assert.Equal(t, "tinypkg-1.0\n", out.Stdout)
	require.NotNil(t, out.Install)
	assert.Contains(t, out.Install.Packages, "tinypkg==1.0")

	out, _ = callOK[runOutput](t, s.cs, "run_python", map[string]any{"code": code, "requirements": []string{"not-there==2.0"}})
	assert.Equal(t, "install", out.Status)
	assert.Contains(t, out.Install.Output, "not-there")

	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{"requirements": []string{"tinypkg==1.0"}})
	out, _ = callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "code": code})
	assert.Equal(t, "tinypkg-1.0\n", out.Stdout)
	list, _ := callOK[sessionListOut](t, s.cs, "session_list", map[string]any{})
	require.Len(t, list.Sessions, 1)
	assert.Contains(t, list.Sessions[0].Requirements, "tinypkg==1.0")
}
