package swebench_test

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	kubebackend "github.com/swebox/swebox/sandbox/kube"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// TestKubeAPIServerLostMidRunIsEngineLost: when the cluster's API server
// stops answering in the middle of a run (the client reaches it through a
// proxy the test takes down), the instances in flight and those not yet
// started end as engine_lost, an infrastructure outcome, never as a plain
// error or a verdict, and the run's error says the engine was lost.
func TestKubeAPIServerLostMidRunIsEngineLost(t *testing.T) {
	direct := kubetest.Client(t) // its cleanup prunes the test's pods, unproxied
	cfgPath := kubetest.Kubeconfig(t)
	rc, err := clientcmd.BuildConfigFromFlags("", cfgPath)
	require.NoError(t, err)
	api, err := url.Parse(rc.Host)
	require.NoError(t, err)
	proxy := testenv.NewEngineProxy(t, rc.Host, "tcp")
	raw, err := clientcmd.LoadFromFile(cfgPath)
	require.NoError(t, err)
	for _, c := range raw.Clusters {
		c.Server = "https://" + strings.TrimPrefix(proxy.Host(), "tcp://")
		c.TLSServerName = api.Hostname() // the server's certificate names its own address
	}
	proxied := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*raw, proxied))
	b, err := kubebackend.New(proxied, kubebackend.WithNamespace(kubetest.Namespace))
	require.NoError(t, err)
	kc, err := sandbox.New(sandbox.WithSession(direct.Session()), sandbox.WithBackend(b))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })

	p := swebenchtest.NewProject(t)
	hang := swebenchtest.CalcDiff("    while True: pass", "    return a * b")
	var ds []dataset.Instance
	var preds []dataset.Prediction
	for _, id := range []string{"calc__calc-1", "calc__calc-2", "calc__calc-3", "calc__calc-4"} {
		ds = append(ds, p.Instance(id))
		preds = append(preds, swebenchtest.Pred(id, hang))
	}
	cfg := p.Config(t, kc, "apilost-"+direct.Session(), ds, preds)
	cfg.MaxWorkers, cfg.Limits = 2, sandbox.Limits{}
	var once sync.Once
	cfg.Progress = func(ev swebench.Event) {
		if ev.Kind == swebench.EventStarted {
			// Give the first instances time to be running their tests.
			once.Do(func() { time.AfterFunc(20*time.Second, proxy.TakeDown) })
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := swebench.Evaluate(ctx, cfg)
	require.Error(t, err)
	assert.ErrorIs(t, err, swebench.ErrEngineLost, "the run's error says the engine was lost")
	require.NotNil(t, res)
	for _, inst := range ds {
		out := res.Outcomes[inst.InstanceID]
		assert.Contains(t, []swebench.Outcome{swebench.OutcomeEngineLost, swebench.OutcomeCancelled}, out,
			"%s: an instance the lost API server stopped is engine_lost (or never started), never error or a verdict", inst.InstanceID)
	}
	lost := 0
	for _, r := range res.Instances {
		if r.Outcome == swebench.OutcomeEngineLost {
			lost++
			assert.True(t, errors.Is(r.Err, sandbox.ErrEngineUnreachable), "%s: %v", r.InstanceID, r.Err)
		}
	}
	assert.Positive(t, lost, "instances in flight when the API server went away are engine_lost")
}
