package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/engineflags"
)

// A build without the kube tag refuses --kubeconfig before anything runs
// (exit 2, nothing written), in a run, the demo and prune alike, naming the
// command that builds eval with the backend; the cluster flags still parse
// as in a build with it. A build with the tag takes --kubeconfig.
func TestDefaultBuildRefusesKubeconfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	o, err := parseRunFlags(defaultRunOptions(), []string{"--kubeconfig", kubeconfig, "--kube_namespace", "ns", "-p", "gold", "--run_id", "r"})
	require.NoError(t, err, "the flags parse in every build")
	if engineflags.KubeBuilt {
		assert.NoError(t, o.checkBuilt())
		return
	}
	for _, args := range [][]string{
		{"--kubeconfig", kubeconfig, "-p", "gold", "--run_id", "r"},
		{"demo", "--kubeconfig", kubeconfig},
		{"prune", "--all", "--kubeconfig", kubeconfig},
	} {
		t.Run(args[0], func(t *testing.T) {
			work := t.TempDir()
			t.Chdir(work)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, nil, &stdout, &stderr)
			assert.Equal(t, exitUsage, code, stderr.String())
			assert.Contains(t, stderr.String(), "--kubeconfig: this build of eval has no Kubernetes backend; build it with `go ")
			assert.Contains(t, stderr.String(), " -tags kube ")
			assert.Empty(t, stdout.String())
			entries, err := os.ReadDir(work)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written")
		})
	}
}

// Under `go run` the command reruns the same command line with the tag;
// otherwise it builds a binary with it.
func TestKubeRebuildCommand(t *testing.T) {
	type testCase struct {
		name       string
		self, args []string
		want       string
	}
	cases := []testCase{
		{name: "binary", self: []string{"./eval"}, args: []string{"--kubeconfig", "k"}, want: "go build -tags kube ./examples/eval"},
		{name: "go run", self: []string{"go", "run", "./examples/eval"}, args: []string{"demo", "--kubeconfig", "my config"},
			want: "go run -tags kube ./examples/eval demo --kubeconfig 'my config'"},
		{name: "go run by import path", self: []string{"go", "run", "github.com/swebox/swebox/examples/eval"}, args: []string{"--kubeconfig", "k"},
			want: "go run -tags kube github.com/swebox/swebox/examples/eval --kubeconfig k"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, rebuildWithTag(tc.self, tc.args))
		})
	}
}
