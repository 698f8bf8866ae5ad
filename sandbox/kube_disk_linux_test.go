package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// TestKubeWritableRootDiskLimit: on Kubernetes a writable root's pod has
// Limits.Disk as its ephemeral-storage limit; a command that writes far
// more is ended by the kubelet's eviction, which the pod's status in the
// API shows, and the command gets an error, never a result: the sandbox's
// loss, or, when the kubelet's kill lands before it records the eviction,
// the sandbox's stop (both infrastructure errors to the evaluator).
func TestKubeWritableRootDiskLimit(t *testing.T) {
	c := kubetest.Client(t)
	sb := createT(t, c, writableRoot(64<<20))
	res, err := sb.Shell(context.Background(),
		"i=0; while [ $i -lt 64 ]; do dd if=/dev/zero of=/var/fill$i bs=1M count=16 2>/dev/null || exit 3; i=$((i+1)); done; sleep 120; echo wrote all",
		sandbox.ExecRequest{Timeout: 5 * time.Minute})
	require.Error(t, err, "the writer was stopped: %s", res.Stdout.String())
	assert.NotContains(t, res.Stdout.String(), "wrote all")
	var lost *sandbox.LostError
	if errors.As(err, &lost) {
		assert.Equal(t, "Evicted", lost.Reason)
		assert.Contains(t, lost.Detail, "ephemeral")
	} else {
		require.ErrorIs(t, err, sandbox.ErrNotRunning)
	}
	// The kubelet's own record, read from the API server, says who
	// stopped the pod (the pod itself may be gone by now).
	cs := kubetest.Clientset(t)
	var msgs []string
	require.Eventually(t, func() bool {
		evs, err := cs.CoreV1().Events(kubetest.Namespace).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + sb.ID() + ",reason=Evicted"})
		if err != nil || len(evs.Items) == 0 {
			return false
		}
		for _, e := range evs.Items {
			msgs = append(msgs, e.Message)
		}
		return true
	}, time.Minute, time.Second, "the kubelet recorded the pod's eviction")
	assert.Contains(t, strings.Join(msgs, "\n"), "ephemeral")
}
