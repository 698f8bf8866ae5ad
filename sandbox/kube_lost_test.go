package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// A sandbox pod that someone else deletes or evicts while a command runs in
// it is lost: Exec returns a *sandbox.LostError (ErrSandboxLost) naming the pod
// and its node, not a command result, and the pod is gone afterwards.
func TestKubePodLostMidExec(t *testing.T) {
	c := kubetest.Client(t)
	cs := kubetest.Clientset(t)
	type testCase struct {
		name    string
		take    func(ctx context.Context, pod string) error
		reasons []string
	}
	for _, tc := range []testCase{
		{name: "deleted", reasons: []string{"Deleted"}, take: func(ctx context.Context, pod string) error {
			return cs.CoreV1().Pods(kubetest.Namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}},
		// The eviction marks the pod (DisruptionTarget) and deletes it with
		// its 1 s grace period: the loss shows as either.
		{name: "evicted", reasons: []string{"EvictionByEvictionAPI", "Deleted"}, take: func(ctx context.Context, pod string) error {
			return cs.PolicyV1().Evictions(kubetest.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: kubetest.Namespace}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sb, err := c.Create(ctx, sandbox.Spec{Image: testImage(), Policy: sandbox.AllowCommands("sh", "cat")})
			require.NoError(t, err)
			t.Cleanup(func() { _ = sb.Remove(context.Background()) })
			p, err := cs.CoreV1().Pods(kubetest.Namespace).Get(ctx, sb.ID(), metav1.GetOptions{})
			require.NoError(t, err)
			node := p.Spec.NodeName

			type result struct {
				res sandbox.ExecResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "touch /tmp/started; sleep 600"}, Timeout: 10 * time.Minute})
				done <- result{res, err}
			}()
			// Take the pod once the command is surely running in it.
			require.Eventually(t, func() bool {
				r, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"cat", "/tmp/started"}})
				return err == nil && r.ExitCode == 0
			}, time.Minute, 200*time.Millisecond)
			require.NoError(t, tc.take(ctx, sb.ID()))

			r := <-done
			require.ErrorIs(t, r.err, sandbox.ErrSandboxLost, "result %+v", r.res)
			assert.ErrorIs(t, r.err, sandbox.ErrNotRunning)
			var lost *sandbox.LostError
			require.ErrorAs(t, r.err, &lost)
			assert.Equal(t, sb.ID(), lost.Sandbox)
			assert.Contains(t, tc.reasons, lost.Reason)
			if lost.Node != "" {
				assert.Equal(t, node, lost.Node)
			}
			require.Eventually(t, func() bool {
				_, err := cs.CoreV1().Pods(kubetest.Namespace).Get(ctx, sb.ID(), metav1.GetOptions{})
				return err != nil
			}, time.Minute, 200*time.Millisecond, "the lost pod is deleted")
			_, err = sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"cat", "/tmp/started"}})
			assert.ErrorIs(t, err, sandbox.ErrNotRunning, "the sandbox runs nothing more")
		})
	}
}
