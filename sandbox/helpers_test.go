package sandbox_test

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

func testImage() string { return testenv.Image() }

// newClient returns a client on the local engine with a session of its own,
// pruned when the test ends; the test skips when no engine answers or the
// test image is missing.
// The package's tests run with the exec agent, the default, unless they
// turn it off.
func newClient(t testing.TB, opts ...sandbox.Option) *sandbox.Client {
	return testenv.Client(t, opts...)
}

// transports are the ways Exec reaches a sandbox: the in-sandbox agent (on a
// local engine, by default) and the engine's exec (WithExecAgent(false)). Tests of Exec's results
// run over both, which must agree.
var transports = []struct {
	name  string
	agent bool
}{{"agent", true}, {"engine", false}}

// wantsAgent maps a client made by forEachTransport to whether its
// sandboxes must use the agent.
var wantsAgent sync.Map

// forEachTransport runs test as a subtest per transport, with a client of
// that transport.
func forEachTransport(t *testing.T, test func(t *testing.T, c *sandbox.Client)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := newClient(t, sandbox.WithExecAgent(tr.agent))
			wantsAgent.Store(c, tr.agent)
			t.Cleanup(func() { wantsAgent.Delete(c) })
			test(t, c)
		})
	}
}

// createT creates a sandbox and removes it when the test ends. A client of
// forEachTransport must give it that transport.
func createT(t testing.TB, c *sandbox.Client, spec sandbox.Spec) *sandbox.Sandbox {
	t.Helper()
	if spec.Image == "" {
		spec.Image = testImage()
	}
	sb, err := c.Create(context.Background(), spec)
	require.NoError(t, err)
	if want, ok := wantsAgent.Load(c); ok {
		require.Equal(t, want, sb.UsesExecAgent(), "the sandbox's transport")
	}
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

// sessionContainers lists the sandboxes of the client's session, stopped
// ones included.
func sessionContainers(t testing.TB, c *sandbox.Client) []sandbox.Object {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{})
	require.NoError(t, err)
	var sbs []sandbox.Object
	for _, o := range objs {
		if o.Kind == sandbox.KindSandbox {
			sbs = append(sbs, o)
		}
	}
	return sbs
}

// forEachBackend runs f as a subtest on Docker and on Kubernetes; the
// Kubernetes subtest skips without a test cluster (and fails in CI).
func forEachBackend(t *testing.T, f func(t *testing.T, c *sandbox.Client, kube bool)) {
	t.Helper()
	t.Run("docker", func(t *testing.T) { f(t, newClient(t), false) })
	// The exec agent is the default transport on a local engine; the
	// engine's exec, where it cannot be reached, must give the same results.
	t.Run("docker-engine-exec", func(t *testing.T) {
		c := newClient(t, sandbox.WithExecAgent(false))
		wantsAgent.Store(c, false)
		t.Cleanup(func() { wantsAgent.Delete(c) })
		f(t, c, false)
	})
	forEachKubeTransport(t, func(t *testing.T, c *sandbox.Client) { f(t, c, true) })
}

// forEachKubeTransport runs test on the test cluster once per transport, as
// forEachTransport does on Docker: the pods' exec agent (subtest "kube",
// the default) and the API server's exec ("kube-api-exec"). Without a test
// cluster the subtests skip (and fail in CI).
func forEachKubeTransport(t *testing.T, test func(t *testing.T, c *sandbox.Client)) {
	for _, tr := range []struct {
		name  string
		agent bool
	}{{"kube", true}, {"kube-api-exec", false}} {
		t.Run(tr.name, func(t *testing.T) {
			c := kubetest.Client(t, sandbox.WithExecAgent(tr.agent))
			wantsAgent.Store(c, tr.agent)
			t.Cleanup(func() { wantsAgent.Delete(c) })
			test(t, c)
		})
	}
}

// forEachExecTransport runs test over every transport of both backends:
// forEachTransport's on Docker, then forEachKubeTransport's.
func forEachExecTransport(t *testing.T, test func(t *testing.T, c *sandbox.Client, kube bool)) {
	forEachTransport(t, func(t *testing.T, c *sandbox.Client) { test(t, c, false) })
	forEachKubeTransport(t, func(t *testing.T, c *sandbox.Client) { test(t, c, true) })
}

// cancelOnWrite returns a writer that calls cancel at its first write.
func cancelOnWrite(cancel context.CancelFunc) io.Writer {
	var once sync.Once
	return writerFunc(func(p []byte) (int, error) {
		once.Do(cancel)
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
