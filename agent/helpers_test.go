package agent_test

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
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
	t.Cleanup(func() { _ = s.Close(context.Background()) })
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

// sessionContainers lists the containers of the client's session, stopped
// ones included.
func sessionContainers(t testing.TB, c *sandbox.Client) []container.Summary {
	t.Helper()
	cs, err := c.API().ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+c.Session())),
	})
	require.NoError(t, err)
	return cs
}

// agentContainers lists every container an agent Manager made, whatever its
// session (other packages' tests, running at the same time, make none).
func agentContainers(t testing.TB, c *sandbox.Client) []container.Summary {
	t.Helper()
	cs, err := c.API().ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelManaged+"=true"), filters.Arg("label", "swebox.agent")),
	})
	require.NoError(t, err)
	return cs
}
