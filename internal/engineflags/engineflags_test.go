package engineflags_test

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/engineflags"
	"github.com/swebox/swebox/sandbox/kube"
)

// The default of --kube_namespace, spelled here for builds without the
// backend, is the backend's.
func TestDefaultKubeNamespace(t *testing.T) {
	assert.Equal(t, kube.DefaultNamespace, engineflags.DefaultKubeNamespace)
}

func parse(t *testing.T, args ...string) (engineflags.Engine, map[string]bool) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := engineflags.Defaults()
	engineflags.Register(fs, &e, append([]engineflags.Flag{engineflags.DockerHost}, engineflags.KubeFlags()...)...)
	require.NoError(t, fs.Parse(args))
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return e, set
}

func TestCheck(t *testing.T) {
	type testCase struct {
		name string
		args []string
		err  string // "" for none
		flag string // the flag the error names
		want func(t *testing.T, e engineflags.Engine)
	}
	cases := []testCase{
		{name: "defaults", want: func(t *testing.T, e engineflags.Engine) {
			assert.False(t, e.Kube())
			assert.Equal(t, "swebox", e.KubeNamespace)
			assert.True(t, e.KubeImageAffinity)
			assert.Zero(t, e.KubeNodeGrace)
		}},
		{name: "cluster", args: []string{"--kubeconfig", "k", "--kube_namespace", "ns", "--kube_node_grace", "40", "--kube_image_affinity=no"},
			want: func(t *testing.T, e engineflags.Engine) {
				assert.True(t, e.Kube())
				assert.Equal(t, "ns", e.KubeNamespace)
				assert.Equal(t, 40*time.Second, e.KubeNodeGrace)
				assert.False(t, e.KubeImageAffinity)
			}},
		{name: "grace with a unit", args: []string{"--kubeconfig", "k", "--kube_node_grace", "1m30s"}, want: func(t *testing.T, e engineflags.Engine) {
			assert.Equal(t, 90*time.Second, e.KubeNodeGrace)
		}},
		{name: "hosts", args: []string{"--docker_host", "tcp://a:1", "--docker_host", "tcp://b:2"}, want: func(t *testing.T, e engineflags.Engine) {
			assert.Equal(t, []string{"tcp://a:1", "tcp://b:2"}, e.DockerHosts)
		}},
		{name: "two engines", args: []string{"--kubeconfig", "k", "--docker_host", "tcp://h:1"}, flag: "kubeconfig",
			err: "--kubeconfig and --docker_host choose different engines; give one"},
		{name: "namespace without cluster", args: []string{"--kube_namespace", "ns"}, flag: "kube_namespace",
			err: "--kube_namespace applies to Kubernetes, chosen by --kubeconfig"},
		{name: "grace without cluster", args: []string{"--kube_node_grace", "5"}, flag: "kube_node_grace",
			err: "--kube_node_grace applies to Kubernetes, chosen by --kubeconfig"},
		{name: "affinity without cluster, even its default", args: []string{"--kube_image_affinity"}, flag: "kube_image_affinity",
			err: "--kube_image_affinity applies to Kubernetes, chosen by --kubeconfig"},
		{name: "negative grace", args: []string{"--kubeconfig", "k", "--kube_node_grace", "-5s"}, flag: "kube_node_grace",
			err: "--kube_node_grace must be 0 or more seconds, got -5s"},
		{name: "empty namespace", args: []string{"--kubeconfig", "k", "--kube_namespace", ""}, flag: "kube_namespace",
			err: "--kube_namespace must not be empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, set := parse(t, tc.args...)
			err := e.Check(set)
			if tc.err == "" {
				require.NoError(t, err)
				tc.want(t, e)
				return
			}
			var fe *engineflags.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.err, err.Error())
			assert.Equal(t, tc.flag, fe.Flag)
		})
	}
}

// A build without the backend refuses a cluster with the command that
// builds one with it; a build with it takes the cluster. Docker needs no
// backend of either build.
func TestCheckBuilt(t *testing.T) {
	e := engineflags.Defaults()
	require.NoError(t, e.CheckBuilt("eval", "go build -tags kube ./examples/eval"))
	opts, err := e.Options()
	require.NoError(t, err)
	assert.Empty(t, opts, "Docker: the caller's options")

	e.Kubeconfig = "/nonexistent/kubeconfig"
	err = e.CheckBuilt("eval", "go build -tags kube ./examples/eval")
	if engineflags.KubeBuilt {
		require.NoError(t, err)
		_, err = e.Options()
		require.Error(t, err, "the kubeconfig does not exist")
		assert.NotErrorIs(t, err, engineflags.ErrNotBuilt)
		return
	}
	var nb *engineflags.NotBuiltError
	require.ErrorAs(t, err, &nb)
	assert.True(t, errors.Is(err, engineflags.ErrNotBuilt))
	assert.Equal(t, "--kubeconfig: this build of eval has no Kubernetes backend; build it with `go build -tags kube ./examples/eval`", err.Error())
	_, err = e.Options()
	assert.ErrorIs(t, err, engineflags.ErrNotBuilt)
}
