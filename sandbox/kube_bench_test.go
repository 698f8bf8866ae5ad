package sandbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
)

// The Kubernetes counterparts of BenchmarkRunOneShot and BenchmarkExecWarm,
// run side by side with them:
//
//	go test ./sandbox -run '^$' -bench 'RunOneShot|ExecWarm' -benchtime 20x

func BenchmarkKubeRunOneShot(b *testing.B) { benchRunOneShot(b, kubetest.Client(b)) }

func BenchmarkKubeExecWarm(b *testing.B) { benchExecWarm(b, kubetest.Client(b)) }

// BenchmarkKubeRunPooled is BenchmarkRunPooled on the test cluster: each
// iteration takes a running pod from the warm pool, runs `true` in it and
// leaves it to be removed in the background; the wait for the pool to have
// one ready is not timed. The usage in each result (which the exec agent
// measures) shows the run went through the agent in a started pod.
//
//	go test ./sandbox -run '^$' -bench 'RunPooled' -benchtime 20x
func BenchmarkKubeRunPooled(b *testing.B) {
	benchRunPooled(b, kubetest.Client(b, sandbox.WithPool(sandbox.PoolOptions{Size: 2})), func(res sandbox.ExecResult) {
		require.Positive(b, res.Usage.MaxRSS, "served by the exec agent")
	})
}
