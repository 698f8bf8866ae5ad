package sandbox_test

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

func testImage() string { return testenv.Image() }

// newClient returns a client on the local engine with a session of its own,
// pruned when the test ends; the test skips when no engine answers or the
// test image is missing.
func newClient(t testing.TB) *sandbox.Client { return testenv.Client(t) }

// createT creates a sandbox and removes it when the test ends.
func createT(t testing.TB, c *sandbox.Client, spec sandbox.Spec) *sandbox.Sandbox {
	t.Helper()
	if spec.Image == "" {
		spec.Image = testImage()
	}
	sb, err := c.Create(context.Background(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sb.Remove(context.Background())) })
	return sb
}

// execT runs a command and fails the test on an infrastructure error.
func execT(t testing.TB, sb *sandbox.Sandbox, req sandbox.ExecRequest) sandbox.ExecResult {
	t.Helper()
	res, err := sb.Exec(context.Background(), req)
	require.NoError(t, err)
	return res
}

// shT runs a shell script and fails the test on an infrastructure error.
func shT(t testing.TB, sb *sandbox.Sandbox, script string) sandbox.ExecResult {
	t.Helper()
	res, err := sb.Shell(context.Background(), script, sandbox.ExecRequest{})
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
