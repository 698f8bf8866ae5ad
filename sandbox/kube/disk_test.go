package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
)

// TestPodForWritableRootDisk: a writable root's pod has Limits.Disk as its
// ephemeral-storage limit, which the kubelet enforces; a read-only root's
// has none.
func TestPodForWritableRootDisk(t *testing.T) {
	s := defaults(t, sandbox.Spec{Image: "img", User: "0:0", Relax: sandbox.Relax{Root: true, WritableRootFS: true}, Limits: sandbox.Limits{Disk: 128 << 20}})
	pod, err := podFor(s, seam.Keepalive, nil, corev1.PullNever)
	require.NoError(t, err)
	got := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage]
	assert.Equal(t, 0, got.Cmp(resource.MustParse("128Mi")), "ephemeral-storage %s", got.String())
	assert.Empty(t, pod.Spec.InitContainers, "nothing is copied before the sandbox starts")

	pod, err = podFor(defaults(t, sandbox.Spec{Image: "img"}), seam.Keepalive, nil, corev1.PullNever)
	require.NoError(t, err)
	_, ok := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage]
	assert.False(t, ok)
}
