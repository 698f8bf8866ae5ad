package swebench

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/swebox/swebox/sandbox"

	"github.com/swebox/swebox/swebench/imagebuild"
)

func TestOutcomeOf(t *testing.T) {
	type testCase struct {
		name  string
		res   InstanceResult
		want  Outcome
		infra bool
	}
	errRes := func(err error) InstanceResult { return InstanceResult{Status: StatusError, Err: err} }
	for _, tc := range []testCase{
		{name: "resolved", res: InstanceResult{Status: StatusResolved}, want: OutcomeResolved},
		{name: "resolved despite OOM kills", res: InstanceResult{Status: StatusResolved, OOMKills: 1}, want: OutcomeResolved},
		{name: "unresolved", res: InstanceResult{Status: StatusUnresolved}, want: OutcomeUnresolved},
		{name: "unresolved with OOM kills", res: InstanceResult{Status: StatusUnresolved, OOMKills: 2}, want: OutcomeOutOfMemory},
		{name: "empty patch", res: InstanceResult{Status: StatusEmptyPatch}, want: OutcomeEmptyPatch},
		{name: "patch failed", res: errRes(fmt.Errorf("%w: see run_instance.log", ErrPatchApply)), want: OutcomePatchFailed},
		{name: "timed out", res: errRes(&TimeoutError{}), want: OutcomeTimedOut},
		{name: "no image", res: errRes(&NoImageError{Repo: "a/b"}), want: OutcomeImageMissing, infra: true},
		{name: "image not pullable", res: errRes(&sandbox.ImageError{Image: "x"}), want: OutcomeImageMissing, infra: true},
		{name: "image pull failed", res: errRes(fmt.Errorf("ensure: %w", &sandbox.ImageError{Image: "x", PullErr: errors.New("429 Too Many Requests")})), want: OutcomeImagePullFailed, infra: true},
		{name: "image missing on the node", res: errRes(fmt.Errorf("create sandbox: %w", fmt.Errorf("pod p on node n: ErrImageNeverPull: %w", sandbox.ErrImageNotFound))), want: OutcomeImageMissing, infra: true},
		{name: "image build failed", res: errRes(&imagebuild.BuildError{Image: "sweb.env.py.x86_64.abc:latest", Log: "logs/build_images/env/x/build_image.log", Err: errors.New("exit 1")}), want: OutcomeImageBuildFailed, infra: true},
		{name: "engine lost", res: errRes(fmt.Errorf("create sandbox: %w", &sandbox.EngineError{Op: "create", Err: errors.New("refused")})), want: OutcomeEngineLost, infra: true},
		{name: "sandbox lost", res: errRes(fmt.Errorf("run eval script: %w", &sandbox.LostError{Sandbox: "p", Node: "n", Reason: "NodeUnreachable"})), want: OutcomeSandboxLost, infra: true},
		{name: "cancelled", res: errRes(fmt.Errorf("run eval script: %w", context.Canceled)), want: OutcomeCancelled, infra: true},
		{name: "other", res: errRes(errors.New("test spec: bad base_commit")), want: OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outcomeOf(&tc.res)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.infra, got.Infrastructure())
		})
	}
}
