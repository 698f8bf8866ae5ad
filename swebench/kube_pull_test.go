package swebench_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	kubebackend "github.com/swebox/swebox/sandbox/kube"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// On Kubernetes a node pulls the image as the instance's pod starts. A
// registry that refuses the pull for its rate limit (429) is asked again
// after Config.PullBackoff, doubling, Config.PullRetries times; then the
// instance is image_pull_failed with a *PullRetryError carrying the
// registry's answer, never a verdict.
func TestKubePullRateLimitBacksOff(t *testing.T) {
	kube := kubetest.ClientOf(t, kubetest.Backend(t, kubebackend.WithUnprovenNetworkPolicy()))
	host, requests := kubetest.Registry(t, http.StatusTooManyRequests,
		`{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}`)
	f := newFixture(t)
	cfg := f.config(t, "kube-429-"+testenv.Session(t), []dataset.Prediction{pred("calc__calc-1", goldPatch)})
	cfg.Sandboxes = []*sandbox.Client{kube}
	cfg.InstanceIDs = []string{"calc__calc-1"}
	cfg.Image = host + "/swebox/limited:1"
	cfg.PullRetries, cfg.PullBackoff = 2, 100*time.Millisecond
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	r := res.Instances[0]
	assert.Equal(t, swebench.OutcomeImagePullFailed, r.Outcome, r.Error)
	var pr *swebench.PullRetryError
	require.ErrorAs(t, r.Err, &pr)
	assert.Equal(t, 3, pr.Attempts)
	assert.Equal(t, 300*time.Millisecond, pr.Waited)
	assert.True(t, errors.Is(r.Err, sandbox.ErrRateLimited))
	assert.Contains(t, r.Error, "429 Too Many Requests")
	assert.GreaterOrEqual(t, requests(), 3, "the node asked the registry on every attempt")
}
