package kube

import (
	"errors"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodLossReadsThePod(t *testing.T) {
	type testCase struct {
		name   string
		status corev1.PodStatus
		del    bool
		want   string // the loss reason; "" when not lost
	}
	now := metav1.Now()
	for _, tc := range []testCase{
		{name: "running", status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{name: "evicted by the kubelet", status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}, want: "Evicted"},
		{name: "preempted", status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}}, want: "PreemptionByScheduler"},
		{name: "eviction API", status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}}}, want: "EvictionByEvictionAPI"},
		{name: "disruption condition false", status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse}}}},
		{name: "being deleted", status: corev1.PodStatus{Phase: corev1.PodRunning}, del: true, want: "Deleted"},
		{name: "deadline is the pod's own", status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}},
		{name: "main process ended", status: corev1.PodStatus{Phase: corev1.PodFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1"}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: tc.status}
			if tc.del {
				p.DeletionTimestamp = &now
			}
			l := podLoss(p)
			if tc.want == "" {
				assert.Nil(t, l)
				return
			}
			require.NotNil(t, l)
			assert.Equal(t, tc.want, l.Reason)
			assert.Equal(t, "p1", l.Sandbox)
			assert.Equal(t, "n1", l.Node)
			var err error = l
			assert.True(t, errors.Is(err, sandbox.ErrSandboxLost) && errors.Is(err, sandbox.ErrNotRunning))
			_, lostState := podState(p)
			assert.ErrorIs(t, lostState, sandbox.ErrSandboxLost, "podState reports the loss too")
		})
	}
}

func TestNodeLossReadsTheNode(t *testing.T) {
	type testCase struct {
		name   string
		ready  corev1.ConditionStatus
		taints []corev1.Taint
		want   string
	}
	for _, tc := range []testCase{
		{name: "ready", ready: corev1.ConditionTrue},
		{name: "not ready", ready: corev1.ConditionFalse, want: "NodeNotReady"},
		{name: "stopped reporting", ready: corev1.ConditionUnknown, want: "NodeUnreachable"},
		{name: "unreachable taint", ready: corev1.ConditionTrue, taints: []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}, want: "NodeUnreachable"},
		{name: "cordoned only", ready: corev1.ConditionTrue, taints: []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Taints: tc.taints},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: tc.ready}}}}
			l := nodeLoss("p1", n)
			if tc.want == "" {
				assert.Nil(t, l)
				return
			}
			require.NotNil(t, l)
			assert.Equal(t, sandbox.LostError{Sandbox: "p1", Node: "n1", Reason: tc.want, Detail: l.Detail}, *l)
		})
	}
}

func TestAvoidNodesPrefersOthers(t *testing.T) {
	pod, err := podFor(defaults(t, sandbox.Spec{Image: "img"}), seam.Keepalive, nil, corev1.PullNever)
	require.NoError(t, err)
	avoidNodes(pod, nil)
	assert.Nil(t, pod.Spec.Affinity, "no lost node, no affinity")
	avoidNodes(pod, []string{"n1", "n2"})
	terms := pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	// One value per node field selector: the API server refuses more.
	require.Len(t, terms, 2)
	for i, n := range []string{"n1", "n2"} {
		assert.Equal(t, []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{n}}}, terms[i].Preference.MatchFields)
	}
	assert.Nil(t, pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "a preference, never a rule")
}

func TestWithNodeGrace(t *testing.T) {
	var o options
	require.NoError(t, WithNodeGrace(20*time.Second)(&o))
	assert.Equal(t, 20*time.Second, o.nodeGrace)
	assert.Error(t, WithNodeGrace(0)(&o), "a grace period must be positive")
	k := &Backend{}
	assert.Equal(t, DefaultNodeGrace, k.nodeGraceOr(), "the controller manager's default")
	k.nodeGrace = 20 * time.Second
	assert.Equal(t, 20*time.Second, k.nodeGraceOr())
}
