// Package kubetest holds the helpers of tests that run against the project's
// test cluster (scripts/k8s-local.sh). It is apart from internal/testenv so
// that tests of the Docker paths link no Kubernetes package.
package kubetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
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
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// Namespace is the namespace the tests run pods in.
const Namespace = "swebox-test"

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

// Clientset returns a client-go clientset for the test cluster.
func Clientset(t testing.TB) *kubernetes.Clientset {
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

// Backend returns a Kubernetes backend for Namespace of the test cluster,
// which it creates if missing.
func Backend(t testing.TB, opts ...kube.Option) *kube.Backend {
	t.Helper()
	EnsureNamespace(t, Clientset(t), Namespace)
	b, err := kube.New(Kubeconfig(t), append([]kube.Option{kube.WithNamespace(Namespace)}, opts...)...)
	require.NoError(t, err)
	return b
}

// Client returns a client that runs sandboxes as pods in Namespace
// of the test cluster, with a session of its own pruned when the test ends.
func Client(t testing.TB, opts ...sandbox.Option) *sandbox.Client {
	t.Helper()
	return ClientOf(t, Backend(t), opts...)
}

// ClientOf is Client over the backend b.
func ClientOf(t testing.TB, b *kube.Backend, opts ...sandbox.Option) *sandbox.Client {
	t.Helper()
	c, err := sandbox.New(append([]sandbox.Option{sandbox.WithSession(testenv.Session(t)), sandbox.WithBackend(b)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := c.Prune(context.Background(), sandbox.PruneRequest{})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
	return c
}

// APIHostPort returns the API server's host and port from the test
// cluster's kubeconfig.
func APIHostPort(t testing.TB) (host, port string) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", Kubeconfig(t))
	require.NoError(t, err)
	u, err := url.Parse(rc.Host)
	require.NoError(t, err)
	return u.Hostname(), u.Port()
}

// Script returns the path of scripts/k8s-local.sh of the running test
// cluster (SWEBOX_TEST_K8S_LOCAL, which `k8s-local.sh env` prints), for tests
// that stop and restart parts of it. Without it the test skips (fails in CI).
func Script(t testing.TB) string {
	t.Helper()
	p := os.Getenv("SWEBOX_TEST_K8S_LOCAL")
	if p == "" {
		cienv.Skip(t, "SWEBOX_TEST_K8S_LOCAL is not set: this test drives the project's own test cluster through its script (eval $(scripts/k8s-local.sh env))")
	}
	return p
}

// RunScriptT runs the test cluster's script with args and fails the test
// when it fails; it returns the script's output.
func RunScriptT(t testing.TB, args ...string) string {
	t.Helper()
	out, err := RunScript(t, args...)
	require.NoError(t, err)
	return out
}

// RunScript runs the test cluster's script with args.
func RunScript(t testing.TB, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(Script(t), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("k8s-local.sh %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// ReadyNodes lists the names of the test cluster's Ready nodes, sorted.
func ReadyNodes(t testing.TB) []string {
	t.Helper()
	nodes, err := Clientset(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
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

// Registry answers every manifest request with status and body, as a
// registry that lacks an image (404) or limits pulls (429) does; the test
// cluster's nodes run on this machine and pull from 127.0.0.1 over plain
// HTTP. It returns the registry's host:port and how many manifest requests
// it got.
func Registry(t testing.TB, status int, body string) (string, func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	reqs := make(chan struct{}, 1000)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		if strings.Contains(r.URL.Path, "/manifests/") {
			select {
			case reqs <- struct{}{}:
			default:
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String(), func() int { return len(reqs) }
}
