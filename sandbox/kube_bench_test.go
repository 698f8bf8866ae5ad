package sandbox_test

import (
	"testing"

	"github.com/swebox/swebox/internal/kubetest"
)

// The Kubernetes counterparts of BenchmarkRunOneShot and BenchmarkExecWarm,
// run side by side with them:
//
//	go test ./sandbox -run '^$' -bench 'RunOneShot|ExecWarm' -benchtime 20x

func BenchmarkKubeRunOneShot(b *testing.B) { benchRunOneShot(b, kubetest.Client(b)) }

func BenchmarkKubeExecWarm(b *testing.B) { benchExecWarm(b, kubetest.Client(b)) }
