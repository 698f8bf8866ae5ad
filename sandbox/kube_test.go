package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// TestEgressProbeRefusesUnenforcedNamespace takes the test cluster's
// NetworkPolicy enforcer away, so that a new namespace's default-deny
// policy exists but holds nothing, and checks that the client refuses to
// start a sandbox without a network there, while a client that relaxed the
// proof explicitly starts one.
func TestEgressProbeRefusesUnenforcedNamespace(t *testing.T) {
	cfg := kubetest.Kubeconfig(t)
	enforcer := func(action string) { kubetest.RunScriptT(t, "enforcer", action) }
	cs := kubetest.Clientset(t)
	ns := fmt.Sprintf("swebox-unenforced-%d", time.Now().UnixNano()%1e9)
	enforcer("stop")
	t.Cleanup(func() { enforcer("start") })
	kubetest.EnsureNamespace(t, cs, ns)
	t.Cleanup(func() {
		require.NoError(t, cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}))
	})

	strict, err := kube.New(cfg, kube.WithNamespace(ns))
	require.NoError(t, err)
	c, err := sandbox.New(sandbox.WithSession(testenv.Session(t)), sandbox.WithBackend(strict))
	require.NoError(t, err)
	_, err = c.Create(context.Background(), sandbox.Spec{Image: testImage()})
	require.ErrorIs(t, err, kube.ErrNetworkNotEnforced)
	var ie *kube.IsolationError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, ns, ie.Namespace)
	assert.Contains(t, ie.Output, "gave up")

	// The same namespace with the proof relaxed explicitly runs sandboxes.
	relaxed, err := kube.New(cfg, kube.WithNamespace(ns), kube.WithUnprovenNetworkPolicy())
	require.NoError(t, err)
	loose, err := sandbox.New(sandbox.WithSession(testenv.Session(t)), sandbox.WithBackend(relaxed))
	require.NoError(t, err)
	sb, err := loose.Create(context.Background(), sandbox.Spec{Image: testImage()})
	require.NoError(t, err)
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"echo", "ran"}})
	assert.Equal(t, "ran\n", res.Stdout.String())
	require.NoError(t, sb.Remove(context.Background()))
}
