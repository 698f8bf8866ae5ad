package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/sandbox"
)

// KubeNamespace is the namespace the tests run pods in.
const KubeNamespace = "swebox-test"

// Kubeconfig returns the test cluster's kubeconfig from
// SWEBOX_TEST_KUBECONFIG (scripts/k8s-local.sh env prints it). Without it the
// test skips, or fails when CI=true, where the cluster must be up.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	p := os.Getenv("SWEBOX_TEST_KUBECONFIG")
	if p == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SWEBOX_TEST_KUBECONFIG is not set, but CI=true: .ci/run must bring the test cluster up (scripts/k8s-local.sh up)")
		}
		t.Skip("SWEBOX_TEST_KUBECONFIG is not set; bring a test cluster up with scripts/k8s-local.sh up and eval $(scripts/k8s-local.sh env)")
	}
	return p
}

// KubeClientset returns a client-go clientset for the test cluster.
func KubeClientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t))
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	return cs
}

// EnsureNamespace creates the namespace if it is missing and waits for its
// default service account, which pod admission needs.
func EnsureNamespace(t testing.TB, cs kubernetes.Interface, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		require.NoError(t, ctx.Err(), "namespace %s has no default service account", ns)
		time.Sleep(200 * time.Millisecond)
	}
}

// KubeClient returns a client that runs sandboxes as pods in KubeNamespace
// of the test cluster, with a session of its own pruned when the test ends.
func KubeClient(t testing.TB, opts ...sandbox.Option) *sandbox.Client {
	t.Helper()
	cfg := Kubeconfig(t)
	EnsureNamespace(t, KubeClientset(t), KubeNamespace)
	c, err := sandbox.New(append([]sandbox.Option{sandbox.WithSession(Session(t)), sandbox.WithKubernetes(cfg, KubeNamespace)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := c.Prune(context.Background(), sandbox.PruneRequest{})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
	return c
}

// KubeAPIHostPort returns the API server's host and port from the test
// cluster's kubeconfig.
func KubeAPIHostPort(t testing.TB) (host, port string) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t))
	require.NoError(t, err)
	u, err := url.Parse(rc.Host)
	require.NoError(t, err)
	return u.Hostname(), u.Port()
}

// K8sLocalScript returns the path of scripts/k8s-local.sh of the running test
// cluster (SWEBOX_TEST_K8S_LOCAL, which `k8s-local.sh env` prints), for tests
// that stop and restart parts of it. Without it the test skips (fails in CI).
func K8sLocalScript(t testing.TB) string {
	t.Helper()
	p := os.Getenv("SWEBOX_TEST_K8S_LOCAL")
	if p == "" {
		cienv.Skip(t, "SWEBOX_TEST_K8S_LOCAL is not set: this test drives the project's own test cluster through its script (eval $(scripts/k8s-local.sh env))")
	}
	return p
}

// RunK8sLocalT runs the test cluster's script with args and fails the test
// when it fails; it returns the script's output.
func RunK8sLocalT(t testing.TB, args ...string) string {
	t.Helper()
	out, err := RunK8sLocal(t, args...)
	require.NoError(t, err)
	return out
}

// RunK8sLocal runs the test cluster's script with args.
func RunK8sLocal(t testing.TB, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(K8sLocalScript(t), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("k8s-local.sh %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// ReadyNodes lists the names of the test cluster's Ready nodes, sorted.
func ReadyNodes(t testing.TB) []string {
	t.Helper()
	nodes, err := KubeClientset(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var out []string
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && !n.Spec.Unschedulable {
				out = append(out, n.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}
