package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

func testImage() string { return testenv.Image() }

// newClient returns a client with a session of its own, pruned when the test
// ends, after which no container of the session may remain. It skips the
// test when no engine answers or the image is missing.
func newClient(t testing.TB) *sandbox.Client {
	t.Helper()
	c := testenv.Client(t)
	t.Cleanup(func() { require.Empty(t, sessionContainers(t, c), "containers left behind") })
	return c
}

// newManager returns a manager on the test image with a state directory of
// its own, closed when the test ends.
func newManager(t testing.TB, opts ...agent.Option) (*agent.Manager, *sandbox.Client) {
	t.Helper()
	c := newClient(t)
	opts = append([]agent.Option{agent.WithImage(testImage()), agent.WithStateDir(t.TempDir())}, opts...)
	m, err := agent.New(c, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m, c
}

// runPythonT runs code one-shot and fails the test on an infrastructure
// error.
func runPythonT(t testing.TB, m *agent.Manager, code string, opts agent.RunOptions) agent.Result {
	t.Helper()
	res, err := m.RunPython(context.Background(), code, opts)
	require.NoError(t, err)
	return res
}

// createT creates a session that the test's end removes.
func createT(t testing.TB, m *agent.Manager, name string, opts agent.SessionOptions) *agent.Session {
	t.Helper()
	s, err := m.Create(context.Background(), name, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// sessionPythonT runs code in a session and fails the test on an
// infrastructure error.
func sessionPythonT(t testing.TB, s *agent.Session, code string, opts agent.ExecOptions) agent.Result {
	t.Helper()
	res, err := s.RunPython(context.Background(), code, opts)
	require.NoError(t, err)
	return res
}

// sessionContainers lists the sandboxes of the client's session, stopped
// ones included.
func sessionContainers(t testing.TB, c *sandbox.Client) []sandbox.Object {
	t.Helper()
	return listSandboxes(t, c, sandbox.ListRequest{})
}

// agentContainers lists every sandbox an agent Manager made, whatever its
// session (other packages' tests, running at the same time, make none).
func agentContainers(t testing.TB, c *sandbox.Client) []sandbox.Object {
	t.Helper()
	return listSandboxes(t, c, sandbox.ListRequest{All: true, Labels: map[string]string{"swebox.agent": ""}})
}

func listSandboxes(t testing.TB, c *sandbox.Client, req sandbox.ListRequest) []sandbox.Object {
	t.Helper()
	objs, err := c.List(context.Background(), req)
	require.NoError(t, err)
	var sbs []sandbox.Object
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			sbs = append(sbs, o)
		}
	}
	return sbs
}
