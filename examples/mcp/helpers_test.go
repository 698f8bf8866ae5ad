package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// raceEnabled is set by race_test.go under -race.
var raceEnabled bool

// build is one build of the server per test binary.
type build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// builds are the server's builds by build tags: the default one and the
// one with the Kubernetes backend (-tags kube).
var builds = map[string]*build{"": {}, "kube": {}}

// serverBin builds the server once per test binary and returns its path.
func serverBin(t testing.TB) string {
	t.Helper()
	return buildServer(t, "")
}

// serverBinEnv names a prebuilt server (the default build) that the tests
// run instead of building one: where the tests run as a user without a Go
// toolchain (.ci/run's rootless Podman steps, as the engine's user).
const serverBinEnv = "SWEBOX_TEST_MCP_BIN"

// buildServer builds the server with tags (and -race when the test binary
// has it) once per test binary and returns its path; for the default build,
// $SWEBOX_TEST_MCP_BIN when set.
func buildServer(t testing.TB, tags string) string {
	t.Helper()
	if bin := os.Getenv(serverBinEnv); bin != "" && tags == "" {
		return bin
	}
	b := builds[tags]
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "swebox-mcp-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "mcp")
		_, file, _, _ := runtime.Caller(0)
		args := []string{"build", "-o", b.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Dir = filepath.Dir(file)
		b.out, b.err = cmd.CombinedOutput()
	})
	require.NoError(t, b.err, "build the server (tags %q): %s", tags, b.out)
	return b.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range builds {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}

// engine returns a sandbox client whose session names the server's
// containers (--name), pruned when the test ends; it skips the test without
// an engine or the test image.
func engine(t testing.TB) *sandbox.Client {
	t.Helper()
	return testenv.Client(t)
}

// baseArgs are the flags every test server gets: the test's label and image.
func baseArgs(c *sandbox.Client, extra ...string) []string {
	args := []string{"--name", c.Session(), "--image", testenv.Image()}
	if testenv.UnenforcedLimits() {
		args = append(args, "--unenforced_limits")
	}
	return append(args, extra...)
}

// stdioServer is the built server run over stdio by the SDK's client.
type stdioServer struct {
	cmd    *exec.Cmd
	stderr *testenv.SyncBuffer
	cs     *mcp.ClientSession
}

// startStdio starts the server with args and connects the SDK's client.
func startStdio(t testing.TB, args []string, opts *mcp.ClientOptions) *stdioServer {
	t.Helper()
	return startStdioEnv(t, args, opts, nil)
}

// startStdioEnv is startStdio with env added to the server's environment.
func startStdioEnv(t testing.TB, args []string, opts *mcp.ClientOptions, env []string) *stdioServer {
	t.Helper()
	cmd := exec.Command(serverBin(t), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "swebox-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	require.NoError(t, err, "connect; server stderr:\n%s", stderr.String())
	s := &stdioServer{cmd: cmd, stderr: stderr, cs: cs}
	t.Cleanup(func() { _ = cs.Close() })
	return s
}

// httpServer is the built server serving streamable HTTP.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	stderr *testenv.SyncBuffer
}

// startHTTP starts the server with --http on a free loopback port and waits
// for the address it prints.
func startHTTP(t testing.TB, args []string) *httpServer {
	t.Helper()
	return startHTTPBin(t, serverBin(t), args)
}

// startHTTPBin is startHTTP with the server binary bin.
func startHTTPBin(t testing.TB, bin string, args []string) *httpServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	pr, pw := io.Pipe()
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = io.MultiWriter(stderr, pw)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		pw.Close()
	})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "serving MCP on "); ok {
				urlc <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case u := <-urlc:
		return &httpServer{cmd: cmd, url: u, stderr: stderr}
	case <-time.After(time.Minute):
		t.Fatalf("the server printed no address; stderr:\n%s", stderr.String())
	}
	return nil
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connectHTTP connects the SDK's client to the server with token at
// protocol 2025-11-25, where each MCP session is a client of its own.
func connectHTTP(t testing.TB, s *httpServer, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return connectHTTPAt(t, s, token, "2025-11-25", opts)
}

// connectHTTPAt connects the SDK's client to the server with token at
// protocol version (2026-07-28: stateless, the client is its token).
func connectHTTPAt(t testing.TB, s *httpServer, token, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "swebox-test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// callTool calls a tool and fails the test on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "call %s", name)
	return res
}

// callOK calls a tool that must succeed and decodes its structured output.
func callOK[T any](t testing.TB, cs *mcp.ClientSession, name string, args any) (T, *mcp.CallToolResult) {
	t.Helper()
	res := callTool(t, cs, name, args)
	require.False(t, res.IsError, "%s failed: %s", name, text(res))
	return decode[T](t, res), res
}

// callErr calls a tool that must fail with isError and returns its message.
func callErr(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	require.True(t, res.IsError, "%s should have failed: %s", name, text(res))
	return text(res)
}

func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out), "structured content: %s", b)
	return out
}

// text is the result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// leftovers counts the containers the server labelled with c's session.
func leftovers(t testing.TB, c *sandbox.Client) int {
	t.Helper()
	return testenv.CountLeftovers(t, c, c.Session()).Containers
}

// logLines are the per-call log lines a server wrote to stderr.
func logLines(t testing.TB, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["msg"] == "tool call" {
			out = append(out, m)
		}
	}
	return out
}
