package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// TestKubeWritableRootDiskLimit: on Kubernetes a writable root's pod has
// Limits.Disk as its ephemeral-storage limit; a command that writes far
// more is ended by the kubelet's eviction, which is the sandbox's loss
// (never a result of the command), and no pod is left.
func TestKubeWritableRootDiskLimit(t *testing.T) {
	c := kubetest.Client(t)
	sb := createT(t, c, writableRoot(64<<20))
	res, err := sb.Shell(context.Background(),
		"i=0; while [ $i -lt 64 ]; do dd if=/dev/zero of=/var/fill$i bs=1M count=16 2>/dev/null || exit 3; i=$((i+1)); done; sleep 120; echo wrote all",
		sandbox.ExecRequest{Timeout: 5 * time.Minute})
	require.Error(t, err, "the writer was stopped: %s", res.Stdout.String())
	var lost *sandbox.LostError
	require.True(t, errors.As(err, &lost), "%v", err)
	assert.Equal(t, "Evicted", lost.Reason)
	assert.Contains(t, lost.Detail, "ephemeral")
	assert.NotContains(t, res.Stdout.String(), "wrote all")
}
