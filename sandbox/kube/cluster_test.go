package kube_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// A namespace that does not exist is refused by Ping, before anything
// runs, and by the first sandbox of a client that never pinged; the error
// names the namespace and a command that creates it.
func TestMissingNamespaceIsRefused(t *testing.T) {
	cfg := kubetest.Kubeconfig(t)
	ns := fmt.Sprintf("swebox-absent-%d", time.Now().UnixNano()%1e9)
	b, err := kube.New(cfg, kube.WithNamespace(ns))
	require.NoError(t, err)
	c, err := sandbox.New(sandbox.WithSession(testenv.Session(t)), sandbox.WithBackend(b))
	require.NoError(t, err)
	defer c.Close()

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{name: "ping", call: func() error { return c.Ping(context.Background()) }},
		{name: "create", call: func() error {
			_, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
			return err
		}},
		{name: "create with a network", call: func() error {
			_, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image(), Relax: sandbox.Relax{Network: "pod"}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.ErrorIs(t, err, kube.ErrNamespaceNotFound)
			var ne *kube.NamespaceError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, ns, ne.Namespace)
			assert.Contains(t, err.Error(), "kubectl --kubeconfig "+cfg+" create namespace "+ns)
			assert.NotErrorIs(t, err, sandbox.ErrEngineUnreachable)
		})
	}
}

// An image the node cannot pull ends the sandbox's start with a
// *sandbox.ImageError that carries the registry's answer (a failed pull, not
// a missing image), and a 429 also matches sandbox.ErrRateLimited.
func TestImagePullFailureCarriesTheRegistryAnswer(t *testing.T) {
	b := kubetest.Backend(t, kube.WithUnprovenNetworkPolicy())
	c := kubetest.ClientOf(t, b)
	for _, tc := range []struct {
		name        string
		status      int
		body        string
		answer      string
		rateLimited bool
	}{
		{name: "not found", status: http.StatusNotFound,
			body:   `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`,
			answer: "not found"},
		{name: "rate limit", status: http.StatusTooManyRequests,
			body:   `{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}`,
			answer: "429 Too Many Requests", rateLimited: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, requests := kubetest.Registry(t, tc.status, tc.body)
			image := host + "/swebox/unpullable:1"
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, err := c.Create(ctx, sandbox.Spec{Image: image})
			require.Error(t, err)
			var ie *sandbox.ImageError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, image, ie.Image)
			require.Error(t, ie.PullErr, "a failed pull, not pulling disabled")
			assert.Contains(t, ie.PullErr.Error(), tc.answer)
			var pe *kube.PodError
			require.ErrorAs(t, err, &pe)
			assert.NotEmpty(t, pe.Node)
			assert.Equal(t, tc.rateLimited, errors.Is(err, sandbox.ErrRateLimited))
			assert.Positive(t, requests(), "the node asked the registry")
		})
	}
}

// A node that was not Ready when isolation was proven, or joined later, is
// probed before a sandbox without a network may run there; until then the
// sandboxes are held to the proven nodes.
func TestIsolationIsProvenPerNodeBeforeUse(t *testing.T) {
	nodes := kubetest.ReadyNodes(t)
	if len(nodes) < 2 {
		t.Skipf("needs two Ready nodes, the cluster has %v", nodes)
	}
	kube.ForgetProofs() // this backend proves the nodes itself
	b := kubetest.Backend(t)
	c := kubetest.ClientOf(t, b)
	cs := kubetest.Clientset(t)
	required := func(sb *sandbox.Sandbox) ([]string, string) {
		p, err := cs.CoreV1().Pods(kubetest.Namespace).Get(context.Background(), sb.ID(), metav1.GetOptions{})
		require.NoError(t, err)
		require.NotNil(t, p.Spec.Affinity, "a sandbox without a network is held to proven nodes")
		ns := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		require.NotNil(t, ns)
		var allowed []string
		for _, term := range ns.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				allowed = append(allowed, f.Values...)
			}
		}
		return allowed, p.Spec.NodeName
	}

	late := nodes[1]
	require.NoError(t, kube.SetNodeView(b, late))
	first, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
	require.NoError(t, err)
	allowed, ran := required(first)
	assert.Equal(t, []string{nodes[0]}, allowed)
	assert.Equal(t, nodes[0], ran)
	assert.Equal(t, []string{nodes[0]}, kube.ProvenNodes(b), "a node that was not Ready is not probed yet")

	kube.ClearNodeView(b)
	second, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
	require.NoError(t, err)
	allowed, _ = required(second)
	assert.Equal(t, nodes, allowed)
	assert.Equal(t, nodes, kube.ProvenNodes(b), "the node was probed once it was Ready")
}

// A node proven by one backend is proven for the process's other backends
// of the same cluster and namespace: a second client probes nothing and
// runs its sandbox on the proven nodes, while a backend of another
// namespace (another policy) probes every node itself.
func TestProofIsSharedWithinTheProcess(t *testing.T) {
	nodes := kubetest.ReadyNodes(t)
	kube.ForgetProofs()
	create := func(b *kube.Backend) int {
		t.Helper()
		probed := kube.CountProbes(b)
		sb, err := kubetest.ClientOf(t, b).Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
		require.NoError(t, err)
		require.NoError(t, sb.Remove(context.Background()))
		assert.Equal(t, nodes, kube.ProvenNodes(b))
		return probed()
	}
	assert.Equal(t, len(nodes), create(kubetest.Backend(t)), "the first backend probes every node")
	assert.Zero(t, create(kubetest.Backend(t)), "a second backend of the namespace probes none")

	cs := kubetest.Clientset(t)
	ns := fmt.Sprintf("swebox-proof-%d", time.Now().UnixNano()%1e9)
	kubetest.EnsureNamespace(t, cs, ns)
	t.Cleanup(func() {
		assert.NoError(t, cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}))
	})
	other, err := kube.New(kubetest.Kubeconfig(t), kube.WithNamespace(ns))
	require.NoError(t, err)
	assert.Equal(t, len(nodes), create(other), "a backend of another namespace probes every node")
}

// The first sandbox's pod is created and runs while its node's isolation
// proof is under way, and is handed out only once that proof has passed; a
// proof that fails fails the sandbox, whatever the pod's own probe finds,
// and its pod is deleted; the next sandbox proves the node again.
func TestSandboxWaitsForItsNodesProof(t *testing.T) {
	nodes := kubetest.ReadyNodes(t)
	cs := kubetest.Clientset(t)
	kube.ForgetProofs()
	b := kubetest.Backend(t)
	c := kubetest.ClientOf(t, b)
	gate := make(chan error)
	kube.GateProofs(b, gate)
	running := func() int {
		list, err := cs.CoreV1().Pods(kubetest.Namespace).List(context.Background(),
			metav1.ListOptions{LabelSelector: sandbox.LabelSession + "=" + c.Session()})
		require.NoError(t, err)
		n := 0
		for _, p := range list.Items {
			if p.Status.Phase == "Running" {
				n++
			}
		}
		return n
	}

	type created struct {
		sb  *sandbox.Sandbox
		err error
	}
	create := func() <-chan created {
		done := make(chan created, 1)
		go func() {
			sb, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
			done <- created{sb, err}
		}()
		return done
	}
	done := create()
	require.Eventually(t, func() bool { return running() == 1 }, 2*time.Minute, 100*time.Millisecond,
		"the sandbox's pod runs while the proofs are held")
	select {
	case r := <-done:
		t.Fatalf("the sandbox was handed out before its node's proof passed (err %v)", r.err)
	case <-time.After(3 * time.Second): // long past its own probe
	}
	for range nodes {
		gate <- nil // each node's proof goes on to its probe pods
	}
	r := <-done
	require.NoError(t, r.err)
	res, err := r.sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"echo", "ran"}})
	require.NoError(t, err)
	assert.Equal(t, "ran\n", res.Stdout.String())
	require.NoError(t, r.sb.Remove(context.Background()))
	assert.Equal(t, nodes, kube.ProvenNodes(b))

	// Another backend, whose proofs fail.
	kube.ForgetProofs()
	b2 := kubetest.Backend(t)
	c = kubetest.ClientOf(t, b2)
	kube.GateProofs(b2, gate)
	done = create()
	for range nodes {
		gate <- errors.New("the proof failed here")
	}
	r = <-done
	require.ErrorContains(t, r.err, "the proof failed here")
	pods, err := cs.CoreV1().Pods(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: sandbox.LabelSession + "=" + c.Session()})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.NotNil(t, p.DeletionTimestamp, "pod %s of the refused sandbox is left behind", p.Name)
	}
	assert.Empty(t, kube.ProvenNodes(b2))

	// The next sandbox proves the nodes again, and this time they hold.
	probed := kube.CountProbes(b2)
	kube.GateProofs(b2, nil)
	sb, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
	require.NoError(t, err)
	require.NoError(t, sb.Remove(context.Background()))
	assert.Equal(t, len(nodes), probed(), "every failed proof ran again")
	assert.Equal(t, nodes, kube.ProvenNodes(b2))
}

// A command through the pod's exec agent takes a stream opened ahead by the
// one before it, while that stream is fresh; after a pause longer than the
// agent waits on an idle stream, the next command opens its own and runs
// as well.
func TestAgentStreamsAreOpenedAhead(t *testing.T) {
	b := kubetest.Backend(t)
	c := kubetest.ClientOf(t, b)
	sb, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, sb.Remove(context.Background())) })
	require.True(t, sb.UsesExecAgent())
	fresh, spare := kube.CountAgentStreams(b)
	run := func(i int) {
		t.Helper()
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"echo", fmt.Sprint(i)}})
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("%d\n", i), res.Stdout.String())
	}
	for i := range 10 {
		run(i)
	}
	assert.Equal(t, 10, fresh()+spare())
	assert.Positive(t, spare(), "back-to-back commands took streams opened ahead")
	took := spare()
	time.Sleep(11 * time.Second) // past the agent's 10 s wait for a command
	run(10)
	assert.Equal(t, took, spare(), "a stream older than the agent's wait is not used")
}

// A sandbox pod without a network that its namespace's default-deny policy
// does not hold is never handed out: its own probe, run as the sandbox's
// user, reaches the API server's address, so the start fails with an
// *IsolationError and the pod is deleted. The nodes' proof passed first,
// as on a cluster whose enforcer isolates the probe pods but misses a
// sandbox; here the sandbox escapes the policy's selector, so the enforcer
// of the shared cluster keeps running.
func TestSandboxOutsideThePolicyIsRefused(t *testing.T) {
	b := kubetest.Backend(t)
	c := kubetest.ClientOf(t, b)
	escaped := kube.EscapeIsolation(b)
	const user = "1234:1235" // not the default, so that the probe's ids say whose they are
	_, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image(), User: user})
	require.Error(t, err)
	require.Equal(t, 1, escaped(), "the sandbox pod was created outside the policy")
	require.ErrorIs(t, err, kube.ErrNetworkNotEnforced)
	var ie *kube.IsolationError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, kubetest.Namespace, ie.Namespace)
	assert.NotEmpty(t, ie.Node)
	host, port := kubetest.APIHostPort(t)
	assert.Equal(t, net.JoinHostPort(host, port), ie.Target)
	assert.Contains(t, ie.Output, "uid "+user, "the probe runs as the sandbox's user")
	assert.Contains(t, ie.Output, "gave up")
	assert.Contains(t, ie.Output, "last: connected")

	pods, err := kubetest.Clientset(t).CoreV1().Pods(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: sandbox.LabelSession + "=" + c.Session()})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.NotNil(t, p.DeletionTimestamp, "pod %s of the refused sandbox is left behind", p.Name)
	}
}

// Closing a client ends the isolation proofs under way and deletes their
// probe pods before Close returns: a program that exits right after it
// leaves none behind. The sandbox that waited for the proof fails, and its
// pod is deleted too. The probe pods carry the session's labels, not those
// of the sandbox that started the proof (a run's cleanup would otherwise
// take another run's proof for its own).
func TestCloseEndsTheProofsUnderWay(t *testing.T) {
	cs := kubetest.Clientset(t)
	kube.ForgetProofs()
	b := kubetest.Backend(t)
	c := kubetest.ClientOf(t, b)
	pods := func(selector string) []string {
		list, err := cs.CoreV1().Pods(kubetest.Namespace).List(context.Background(),
			metav1.ListOptions{LabelSelector: sandbox.LabelSession + "=" + c.Session() + selector})
		require.NoError(t, err)
		var names []string
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return names
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Create(context.Background(), sandbox.Spec{Image: testenv.Image(), Labels: map[string]string{"swebox.run": "r1"}})
		done <- err
	}()
	require.Eventually(t, func() bool { return len(pods(",swebox.probe")) > 0 }, 2*time.Minute, 20*time.Millisecond,
		"the proof's probe pods were created")
	assert.Empty(t, pods(",swebox.probe,swebox.run"), "a probe pod carries the label of the sandbox that started the proof")
	assert.NotEmpty(t, pods(",swebox.probe,"+sandbox.LabelManaged+"=true,"+sandbox.LabelOwner), "probe pods carry the client's labels")
	require.NoError(t, c.Close())
	assert.Empty(t, pods(",swebox.probe"), "probe pods left after Close")
	select {
	case err := <-done:
		assert.Error(t, err, "a sandbox whose node's proof was ended is not handed out")
	case <-time.After(2 * time.Minute):
		t.Fatal("the sandbox waiting for the proof did not return after Close")
	}
	assert.Empty(t, pods(""), "pods left after Close and the failed sandbox")
}
