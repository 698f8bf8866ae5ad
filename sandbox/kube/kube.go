package kube

import (
	"context"
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"
)

// ErrNetworkNotEnforced: the cluster does not enforce the default-deny
// NetworkPolicy that stands for "network none", so a sandbox pod could reach
// the network. Run with an enforcer, or relax network isolation explicitly.
var ErrNetworkNotEnforced = errors.New("network isolation not enforced")

// IsolationError reports that a probe pod under the default-deny
// NetworkPolicy reached an address it must not reach.
type IsolationError struct {
	Namespace string
	Node      string
	Target    string // the address the probe reached
	Output    string // what the probe printed
}

func (e *IsolationError) Error() string {
	return fmt.Sprintf("namespace %s, node %s: a pod under the default-deny NetworkPolicy reached %s, so NetworkPolicy is not enforced and \"network none\" would not hold (probe said %q)",
		e.Namespace, e.Node, e.Target, strings.TrimSpace(e.Output))
}

func (e *IsolationError) Unwrap() error { return ErrNetworkNotEnforced }

// ClusterError reports a failed call to the Kubernetes API server.
type ClusterError struct {
	Host string
	Op   string
	Err  error
}

func (e *ClusterError) Error() string {
	return fmt.Sprintf("%s: kubernetes API server %s: %v", e.Op, e.Host, e.Err)
}

func (e *ClusterError) Unwrap() []error {
	var op *net.OpError
	if errors.As(e.Err, &op) || errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
		return []error{sandbox.ErrEngineUnreachable, e.Err}
	}
	return []error{e.Err}
}

// ErrNamespaceNotFound: the namespace the backend runs pods in does not
// exist; an *NamespaceError names it.
var ErrNamespaceNotFound = errors.New("kubernetes namespace not found")

// NamespaceError reports that the namespace the backend runs pods in does
// not exist on the cluster. Nothing is created in it, so it is refused
// before any sandbox: Ping checks it, and so does the first pod.
type NamespaceError struct {
	Namespace  string
	Kubeconfig string // the file the backend was made from
}

func (e *NamespaceError) Error() string {
	return fmt.Sprintf("kubernetes namespace %q does not exist; create it first: kubectl --kubeconfig %s create namespace %s",
		e.Namespace, e.Kubeconfig, e.Namespace)
}

func (e *NamespaceError) Unwrap() error { return ErrNamespaceNotFound }

// PodError reports a sandbox pod that failed to start or stopped.
type PodError struct {
	Pod    string
	Node   string
	Reason string // e.g. "ErrImageNeverPull", "Evicted", "DeadlineExceeded"
	Detail string
}

func (e *PodError) Error() string {
	msg := fmt.Sprintf("pod %s", e.Pod)
	if e.Node != "" {
		msg += " on node " + e.Node
	}
	return fmt.Sprintf("%s: %s: %s", msg, e.Reason, e.Detail)
}

// Unwrap marks an image the node lacks as sandbox.ErrImageNotFound and a pod that
// stopped as sandbox.ErrNotRunning.
func (e *PodError) Unwrap() error {
	switch e.Reason {
	case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
		return sandbox.ErrImageNotFound
	}
	return sandbox.ErrNotRunning
}

// Backend runs sandboxes as pods in one namespace. It implements
// sandbox.Backend; its methods are called by package sandbox.
type Backend struct {
	cs      kubernetes.Interface
	rc      *rest.Config
	ns      string
	config  string // the kubeconfig file
	log     *slog.Logger
	pull    corev1.PullPolicy
	trustNP bool // the caller relaxed the egress proof

	probeMu sync.Mutex
	proofs  map[string]*nodeProof // each node's isolation proof, by node
	// The proofs run on proofCtx (made by proofContext), which Close
	// ends, and Close waits for them (proofRuns): their probe pods are
	// deleted before it returns.
	proofCtx   context.Context
	stopProofs context.CancelFunc
	proofRuns  sync.WaitGroup

	mu   sync.Mutex
	pods map[string]*podInfo // the pods this client created, by name

	loss      lossKeeper
	nodeGrace time.Duration // the cluster's node-monitor-grace-period; 0: DefaultNodeGrace

	env seam.Env[sandbox.Spec] // set by Bind

	noImageAffinity bool        // WithImageAffinity(false)
	placer          imagePlacer // the pulls claimed for pods (images.go)

	test *testHooks // nil but in this package's tests (export_test.go)
}

// testHooks let this package's tests reach states a healthy cluster never
// shows; only export_test.go sets them.
type testHooks struct {
	pod    func(*corev1.Pod)       // edits a sandbox pod before it is created
	probe  func([]string) []string // rewrites the command of a pod's own isolation probe
	probed func(node string)       // told of each node the backend probes
	proof  func(node string) error // runs first in each node's proof; an error fails it
	dialed func(spare bool)        // told of each agent stream a command takes, and whether it was a spare
}

// quietKlog stops client-go from writing to stderr: it reports streams it
// gave up on (an exec cancelled after a timeout) through klog, and a library
// must not print. It changes klog for the whole process, once.
var quietKlog sync.Once

// New returns a backend that runs sandboxes as Pods of the cluster that the
// kubeconfig file describes; give it to sandbox.New with sandbox.WithBackend.
// It reads the kubeconfig but does not contact the cluster; the first call
// that needs it does.
//
// Before a sandbox without a network is handed out, the client proves from
// inside probe pods that the namespace's default-deny NetworkPolicy holds on
// its node, and refuses with an *IsolationError when it does not (see
// WithUnprovenNetworkPolicy).
func New(kubeconfig string, opts ...Option) (*Backend, error) {
	if kubeconfig == "" {
		return nil, errors.New("kube: empty kubeconfig path")
	}
	cfg := options{namespace: DefaultNamespace}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("kube: %w", err)
		}
	}
	quietKlog.Do(func() {
		klog.SetLogger(logr.Discard())
	})
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kube: load kubeconfig %s: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kube: kubernetes client: %w", err)
	}
	return &Backend{
		cs: cs, rc: rc, ns: cfg.namespace, config: kubeconfig, log: slog.New(slog.DiscardHandler), pull: corev1.PullIfNotPresent,
		trustNP: cfg.unproven, nodeGrace: cfg.nodeGrace, noImageAffinity: cfg.noImageAffinity,
		proofs: map[string]*nodeProof{}, pods: map[string]*podInfo{},
	}, nil
}

// Bind receives what package sandbox lends the backend; sandbox.New calls
// it.
func (k *Backend) Bind(env seam.Env[sandbox.Spec]) {
	k.env = env
	if env.Log != nil {
		k.log = env.Log
	}
}

func (k *Backend) apiErr(op string, err error) error {
	return &ClusterError{Host: k.rc.Host, Op: op, Err: err}
}

// ensurePolicy creates the namespace's default-deny NetworkPolicy for pods
// labelled swebox.network=none, if it is missing, and checks that the
// namespace's policies leave a sandbox pod with podLabels isolated: one of
// that name must be exactly the default deny, and no other may select the
// pod and allow it traffic (policies add up, so one allowing rule undoes
// the deny).
func (k *Backend) ensurePolicy(ctx context.Context, podLabels map[string]string) error {
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: kubePolicyName, Labels: map[string]string{sandbox.LabelManaged: labelValue(podLabels[sandbox.LabelManaged])}},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelNetwork: "none"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	list, err := k.cs.NetworkingV1().NetworkPolicies(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return k.apiErr("list NetworkPolicies", err)
	}
	if !slices.ContainsFunc(list.Items, func(p networkingv1.NetworkPolicy) bool { return p.Name == kubePolicyName }) {
		created, err := k.cs.NetworkingV1().NetworkPolicies(k.ns).Create(ctx, np, metav1.CreateOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return &NamespaceError{Namespace: k.ns, Kubeconfig: k.config}
		case apierrors.IsAlreadyExists(err):
			return k.ensurePolicy(ctx, podLabels) // another client made it meanwhile
		case err != nil:
			return k.apiErr("create NetworkPolicy", err)
		}
		list.Items = append(list.Items, *created)
	}
	return policiesIsolate(k.ns, list.Items, podLabels)
}

// PolicyError reports a NetworkPolicy of the namespace that would let a
// sandbox without a network reach the network or be reached.
type PolicyError struct {
	Namespace, Policy string
	Reason            string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("namespace %s: NetworkPolicy %s %s, so \"network none\" would not hold", e.Namespace, e.Policy, e.Reason)
}

func (e *PolicyError) Unwrap() error { return ErrNetworkNotEnforced }

// policiesIsolate checks policies against a sandbox pod's labels (see
// ensurePolicy).
func policiesIsolate(ns string, policies []networkingv1.NetworkPolicy, podLabels map[string]string) error {
	set := k8slabels.Set(podLabels)
	for _, p := range policies {
		perr := func(reason string) error { return &PolicyError{Namespace: ns, Policy: p.Name, Reason: reason} }
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil {
			return perr(fmt.Sprintf("has a pod selector that cannot be read (%v)", err))
		}
		if p.Name == kubePolicyName {
			types := map[networkingv1.PolicyType]bool{}
			for _, t := range p.Spec.PolicyTypes {
				types[t] = true
			}
			switch {
			case !sel.Matches(set):
				return perr(fmt.Sprintf("does not select the sandbox pods (its selector is %q, not %s=none)", sel.String(), LabelNetwork))
			case !types[networkingv1.PolicyTypeIngress] || !types[networkingv1.PolicyTypeEgress]:
				return perr(fmt.Sprintf("governs %v, not both Ingress and Egress", p.Spec.PolicyTypes))
			case len(p.Spec.Ingress) > 0 || len(p.Spec.Egress) > 0:
				return perr("allows traffic instead of denying all of it")
			}
			continue
		}
		if sel.Matches(set) && (len(p.Spec.Ingress) > 0 || len(p.Spec.Egress) > 0) {
			return perr(fmt.Sprintf("selects the sandbox pods (selector %q) and allows them traffic", sel.String()))
		}
	}
	return nil
}

// Probing: a probe connects to the API server's address in rounds of
// probeStreak attempts, started 0.2 s apart without waiting for each other,
// each bounded by 2 s, and succeeds once every attempt of a round went its
// way: refused or timed out under the deny policy, connected for the
// control. One failed connection proves nothing (a hiccup, a slow node), so
// the deny probe must fail repeatedly while the control, started beside it
// on the same node, connects repeatedly. The attempts overlap because a
// denied one is slow: an enforcer that drops the connection leaves it to
// the 2 s bound, and kube-router's reject answers only the SYN sent again
// after a second; in turn they took three times that. probeTries (attempts
// in all) gives a policy at least 20 s to take hold.
const (
	probeTries  = 100
	probeStreak = 3
)

// probeScript probes $1:$2 in rounds of $5 attempts, at most $3 attempts in
// all, until every attempt of a round went the way $4 wants (allow:
// connected; deny: not). It prints what it saw. An attempt is bash's
// /dev/tcp, which starts in milliseconds, or else a python3 interpreter,
// which takes a good part of a second on a busy node. Each attempt runs
// with SWEBOX_PROBE_TRY set to its number, which only a test's stand-in for
// bash or python3 reads.
const probeScript = `h=$1; p=$2; n=$3; want=$4; k=$5
if command -v bash >/dev/null 2>&1; then
  try() { timeout 2 bash -c 'exec 3<>/dev/tcp/$0/$1 && echo connected' "$h" "$p" 2>&1 | tail -1; }
elif command -v python3 >/dev/null 2>&1; then
  try() { python3 -c 'import socket,sys; s=socket.create_connection((sys.argv[1], int(sys.argv[2])), 2); print("connected")' "$h" "$p" 2>&1 | tail -1; }
else
  echo "no python3 or bash in the image to probe with"; exit 2
fi
round() {
  j=1
  while :; do
    (SWEBOX_PROBE_TRY=$(($1+j)); export SWEBOX_PROBE_TRY; echo "$j:$(try)") &
    [ $j -ge "$k" ] && break
    j=$((j+1)); sleep 0.2
  done
  wait
}
i=0; out=
while [ $((i+k)) -le "$n" ]; do
  res=$(round $i | sort -n); held=0
  while IFS= read -r line; do
    out=${line#*:}
    case "$want:$out" in
      allow:connected) held=$((held+1)) ;;
      deny:connected) ;;
      deny:*) held=$((held+1)) ;;
    esac
  done <<EOF
$res
EOF
  if [ $held -ge "$k" ]; then echo "$want held $k times in a row; last: $out"; exit 0; fi
  i=$((i+k)); sleep 0.2
done
echo "gave up after $i tries; last: $out"
exit 1`

// nodeProofs are the nodes where a backend of this process proved network
// isolation, by API server and namespace. Another backend of the same
// cluster and namespace takes them as its own, as a backend keeps its own
// proof for its lifetime: the proof is about the namespace's policy and the
// node's enforcer, which the backends share, and each sandbox pod is still
// held until its own probe is refused (awaitIsolation). So a program that
// makes several clients of one cluster (or a test binary, dozens) probes
// each node once.
type nodeProofs struct {
	mu     sync.Mutex
	proven map[[3]string]bool // API server, namespace, node
}

var processProofs = &nodeProofs{proven: map[[3]string]bool{}}

func (p *nodeProofs) has(server, ns, node string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proven[[3]string{server, ns, node}]
}

func (p *nodeProofs) add(server, ns, node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.proven[[3]string{server, ns, node}] = true
}

// nodeProof is one node's isolation proof: started by the first sandbox
// that may run on the node, and awaited by each sandbox that does before it
// is handed out (Start).
type nodeProof struct {
	done chan struct{}
	err  error // set before done is closed
}

// failed reports whether the proof has ended without holding.
func (p *nodeProof) failed() bool {
	select {
	case <-p.done:
		return p.err != nil
	default:
		return false
	}
}

// proofTimeout bounds one node's proof: the image's pull (when the node
// lacks it) and the two probe pods.
const proofTimeout = prepullDeadline + 2*time.Minute

// startProofs makes sure of the namespace's default-deny policy and starts,
// on each Ready node without a proof under way or passed, the proof that a
// pod under the policy cannot reach the API server's address while a
// control pod without it can (probeNode); a proof that failed is started
// again. It returns the Ready nodes, on which alone the caller may place a
// sandbox without a network. The proofs run while the sandbox's pod is
// created and starts, and Start holds the pod until its node's proof has
// held (awaitProof), as it holds it until its own probe is refused: nothing
// of the caller's runs in a pod before both. A node that was not Ready, or
// not yet in the cluster, when an earlier sandbox was placed is probed
// when a later one may go there. A node another backend of this process
// proved for the same namespace counts as proven (nodeProofs). The probes
// run image, which must have python3 or bash.
func (k *Backend) startProofs(ctx context.Context, image string, labels map[string]string) ([]string, error) {
	podLabels, _ := labelsFor(labels)
	podLabels[LabelNetwork] = "none"
	if err := k.ensurePolicy(ctx, podLabels); err != nil {
		return nil, err
	}
	if k.trustNP {
		return nil, nil
	}
	host, port, err := apiHostPort(k.rc.Host)
	if err != nil {
		return nil, err
	}
	nodes, err := k.nodes(ctx)
	if err != nil {
		return nil, err
	}
	// The proof is the node's: its pods carry the labels of the process
	// that runs it (so Prune and a session's cleanup find them), not the
	// labels of the sandbox that happened to start it, which would make
	// them that sandbox's run's pods.
	proofLabels := processLabels(labels)
	k.probeMu.Lock()
	defer k.probeMu.Unlock()
	if k.proofContext().Err() != nil {
		return nil, fmt.Errorf("prove network isolation: the client is closed")
	}
	var ready []string
	for _, n := range nodes {
		if n.Spec.Unschedulable || !nodeReady(n) {
			continue
		}
		ready = append(ready, n.Name)
		if p := k.proofs[n.Name]; p != nil && !p.failed() {
			continue
		}
		p := &nodeProof{done: make(chan struct{})}
		k.proofs[n.Name] = p
		if processProofs.has(k.rc.Host, k.ns, n.Name) {
			close(p.done)
			continue
		}
		if k.test != nil && k.test.probed != nil {
			k.test.probed(n.Name)
		}
		// The proof is the node's, not this call's: a caller that gives
		// up leaves it to the others that wait for it. Close ends it.
		pctx, cancel := context.WithTimeout(k.proofCtx, proofTimeout)
		k.proofRuns.Add(1)
		go func(node string) {
			defer k.proofRuns.Done()
			defer cancel()
			defer close(p.done)
			if k.test != nil && k.test.proof != nil {
				if p.err = k.test.proof(node); p.err != nil {
					return
				}
			}
			p.err = k.probeNode(pctx, node, image, host, port, proofLabels)
			if p.err == nil {
				processProofs.add(k.rc.Host, k.ns, node)
			}
		}(n.Name)
	}
	if len(ready) == 0 {
		return nil, fmt.Errorf("prove network isolation: no Ready node to probe")
	}
	sort.Strings(ready)
	return ready, nil
}

// processLabels keeps, of a sandbox's labels, those that every object of
// its client carries (sandbox.Client's labels): managed, session, owner.
func processLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, 3)
	for _, key := range []string{sandbox.LabelManaged, sandbox.LabelSession, sandbox.LabelOwner} {
		if v, ok := labels[key]; ok {
			out[key] = v
		}
	}
	return out
}

// proofContext returns the context the backend's proofs run on, which
// Close ends; probeMu is held.
func (k *Backend) proofContext() context.Context {
	if k.proofCtx == nil {
		k.proofCtx, k.stopProofs = context.WithCancel(context.Background())
	}
	return k.proofCtx
}

// awaitProof waits for the isolation proof of the node a pod runs on.
func (k *Backend) awaitProof(ctx context.Context, node string) error {
	k.probeMu.Lock()
	p := k.proofs[node]
	k.probeMu.Unlock()
	if p == nil {
		// Placement keeps a sandbox without a network to nodes whose proof
		// was started.
		return fmt.Errorf("prove network isolation: pod placed on node %s, which was not probed", node)
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("prove network isolation on node %s: %w", node, ctx.Err())
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func apiHostPort(host string) (string, string, error) {
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("prove network isolation: API server address %q: %v", host, err)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return u.Hostname(), port, nil
}

// probeNode runs the deny probe and its control on one node.
func (k *Backend) probeNode(ctx context.Context, node, image, host, port string, labels map[string]string) error {
	start := time.Now()
	// run runs one probe pod and returns what it printed; gaveUp is true
	// when the probe ended because the connections never went its way
	// (the script's exit status 1), which decides the proof whether or
	// not its output can be read.
	run := func(want string) (out string, gaveUp bool, err error) {
		s := k.env.Defaults(sandbox.Spec{Image: image})
		if want == "allow" {
			s.Relax.Network = "pod"
		}
		pl := map[string]string{}
		for k, v := range labels {
			pl[k] = v
		}
		pl["swebox.probe"] = want
		pod, err := podFor(s, []string{"/bin/sh", "-c", probeScript, "swebox-probe", host, port, strconv.Itoa(probeTries), want, strconv.Itoa(probeStreak)}, pl, k.pull)
		if err != nil {
			return "", false, err
		}
		pod.GenerateName = "swebox-probe-"
		pod.Spec.NodeName = node
		pod.Spec.ActiveDeadlineSeconds = ptr(int64(120))
		// An error before the probe has run (the image missing on the node,
		// the pod refused) says nothing about the network: it is returned
		// as what it is, naming the probe pod it stopped.
		name, err := k.createPod(ctx, pod, false)
		if err != nil {
			return "", false, fmt.Errorf("prove network isolation on node %s: start the %s probe pod: %w", node, want, err)
		}
		defer func() { _ = k.deletePod(context.WithoutCancel(ctx), name) }()
		created := time.Now()
		p, err := k.waitDone(ctx, name)
		k.log.Debug("probe pod ended", "node", node, "want", want, "after", time.Since(created).Round(time.Millisecond))
		if err != nil {
			return "", false, fmt.Errorf("prove network isolation on node %s: run the %s probe pod: %w", node, want, err)
		}
		out, err = k.podLogs(ctx, name)
		if err != nil {
			out = fmt.Sprintf("(its output could not be read: %v)", err)
		}
		if p.Status.Phase == corev1.PodSucceeded {
			return out, false, nil
		}
		return out, exitStatus(p) == 1, fmt.Errorf("prove network isolation on node %s: the %s probe failed: %s", node, want, strings.TrimSpace(out))
	}
	// The two probes start at once on the node: the image is pulled there
	// first, once (images.go), not by both.
	if !k.noImageAffinity {
		if err := k.warm(ctx, image, labels, node); err != nil {
			return fmt.Errorf("prove network isolation on node %s: pull the probe's image: %w", node, err)
		}
	}
	var deny string
	var ctlGaveUp, denyGaveUp bool
	var cerr, derr error
	var wg sync.WaitGroup
	wg.Go(func() { _, ctlGaveUp, cerr = run("allow") })
	wg.Go(func() { deny, denyGaveUp, derr = run("deny") })
	wg.Wait()
	if cerr != nil {
		if ctlGaveUp {
			return fmt.Errorf("the control probe could not reach %s:%s, so the isolation probe would prove nothing: %w", host, port, cerr)
		}
		return cerr
	}
	if derr != nil {
		if denyGaveUp {
			return &IsolationError{Namespace: k.ns, Node: node, Target: net.JoinHostPort(host, port), Output: deny}
		}
		return derr
	}
	k.log.Debug("network isolation proven", "node", node, "probe", strings.TrimSpace(deny), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func ptr[T any](v T) *T { return &v }

// exitStatus is the exit status of the pod's sandbox container, -1 when it
// has not ended.
func exitStatus(p *corev1.Pod) int {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == kubeContainer && cs.State.Terminated != nil {
			return int(cs.State.Terminated.ExitCode)
		}
	}
	return -1
}

// createPod creates pod in the namespace and, when running is true, waits
// until its sandbox container runs. A pod that cannot start is deleted and
// reported as a *PodError.
func (k *Backend) createPod(ctx context.Context, pod *corev1.Pod, running bool) (string, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), seam.TeardownTimeout)
	defer cancel()
	created, err := k.cs.CoreV1().Pods(k.ns).Create(cctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "serviceaccount") {
			// A namespace created a moment ago has no default service
			// account yet; the pod admission waits for it.
			time.Sleep(time.Second)
			created, err = k.cs.CoreV1().Pods(k.ns).Create(cctx, pod, metav1.CreateOptions{})
		}
		if apierrors.IsNotFound(err) {
			// The only object a pod's creation needs is its namespace.
			return "", &NamespaceError{Namespace: k.ns, Kubeconfig: k.config}
		}
		if err != nil {
			return "", k.apiErr("create pod", err)
		}
	}
	name := created.Name
	if err := ctx.Err(); err != nil {
		return "", errors.Join(fmt.Errorf("create pod: %w", err), k.deletePod(ctx, name))
	}
	if !running {
		return name, nil
	}
	if _, err := k.waitRunning(ctx, name); err != nil {
		return "", errors.Join(err, k.deletePod(context.WithoutCancel(ctx), name))
	}
	return name, nil
}

// podState reads why a pod is not (or no longer) running: ok is true when
// the sandbox container runs; a non-nil error means it never will.
func podState(p *corev1.Pod) (ok bool, err error) {
	perr := func(reason, detail string) error {
		return &PodError{Pod: p.Name, Node: p.Spec.NodeName, Reason: reason, Detail: detail}
	}
	if l := podLoss(p); l != nil {
		return false, l
	}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		reason := p.Status.Reason
		if reason == "" {
			reason = string(p.Status.Phase)
		}
		return false, perr(reason, p.Status.Message)
	}
	all := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range all {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff":
				return false, pullError(p, cs, w)
			case "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return false, perr(w.Reason, w.Message)
			}
		}
		if t := cs.State.Terminated; t != nil && (cs.Name == kubeContainer || t.ExitCode != 0) {
			return false, perr("ContainerTerminated", fmt.Sprintf("container %s: %s (exit %d) %s", cs.Name, t.Reason, t.ExitCode, t.Message))
		}
		if cs.Name == kubeContainer && cs.State.Running != nil {
			return true, nil
		}
	}
	return false, nil
}

// pullError is a container whose image the node failed to pull: a
// *sandbox.ImageError whose PullErr is the *PodError carrying the node's
// account of the registry's answer, so that callers tell a failed pull
// (sandbox.ErrImageNotFound with a PullErr) from an image that is merely
// absent. A registry's rate limit also matches sandbox.ErrRateLimited; the
// kubelet passes on only the registry's text, so that is what is read, as
// the Docker backend reads the engine's.
func pullError(p *corev1.Pod, cs corev1.ContainerStatus, w *corev1.ContainerStateWaiting) error {
	image := cs.Image
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == cs.Name {
			image = c.Image
		}
	}
	var err error = &PodError{Pod: p.Name, Node: p.Spec.NodeName, Reason: w.Reason, Detail: w.Message}
	msg := strings.ToLower(w.Message)
	if strings.Contains(msg, "toomanyrequests") || strings.Contains(msg, "429 too many requests") {
		err = &rateLimitError{err: err}
	}
	return &sandbox.ImageError{Image: image, PullErr: err}
}

// rateLimitError is a pull a registry refused for its rate limit.
type rateLimitError struct{ err error }

func (e *rateLimitError) Error() string   { return e.err.Error() }
func (e *rateLimitError) Unwrap() []error { return []error{sandbox.ErrRateLimited, e.err} }

// waitRunning waits until the pod's sandbox container runs.
func (k *Backend) waitRunning(ctx context.Context, name string) (node string, err error) {
	err = k.waitPod(ctx, name, func(p *corev1.Pod) (bool, error) {
		node = p.Spec.NodeName
		return podState(p)
	})
	return node, err
}

// waitDone waits until the pod has succeeded or failed.
func (k *Backend) waitDone(ctx context.Context, name string) (*corev1.Pod, error) {
	var last *corev1.Pod
	err := k.waitPod(ctx, name, func(p *corev1.Pod) (bool, error) {
		last = p
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return true, nil
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
				return false, pullError(p, cs, w)
			}
			if w := cs.State.Waiting; w != nil && w.Reason == "ErrImageNeverPull" {
				return false, &PodError{Pod: p.Name, Node: p.Spec.NodeName, Reason: w.Reason, Detail: w.Message}
			}
		}
		return false, nil
	})
	return last, err
}

// waitPod watches the pod until cond says done or fails. A pod that the
// cluster loses meanwhile (deleted by someone else, its node NotReady or
// gone) ends the wait with a *sandbox.LostError within about lossPoll.
func (k *Backend) waitPod(ctx context.Context, name string, cond func(*corev1.Pod) (bool, error)) error {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	t := time.NewTicker(lossPoll)
	defer t.Stop()
	var node string
	see := func(p *corev1.Pod) (bool, error) {
		node = p.Spec.NodeName
		done, err := cond(p)
		var l *sandbox.LostError
		if errors.As(err, &l) {
			return true, k.lost(ctx, l)
		}
		return done || err != nil, err
	}
	deleted := func() error {
		return k.lost(ctx, &sandbox.LostError{Sandbox: name, Node: node, Reason: "Deleted", Detail: "the pod was deleted"})
	}
	for {
		list, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("wait for pod %s: %w", name, ctx.Err())
			}
			return k.apiErr("read pod", err)
		}
		if len(list.Items) == 0 {
			return deleted()
		}
		if done, err := see(&list.Items[0]); done {
			return err
		}
		w, err := k.cs.CoreV1().Pods(k.ns).Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("wait for pod %s: %w", name, ctx.Err())
			}
			return k.apiErr("watch pod", err)
		}
		done, err := k.watchPod(ctx, name, w, see, deleted, t.C, &node)
		w.Stop()
		if done {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wait for pod %s: %w", name, ctx.Err())
		}
	}
}

// watchPod reads one watch of a pod until see says done, the pod is
// deleted, or the watch ends (done false); on each tick it checks the
// pod's node.
func (k *Backend) watchPod(ctx context.Context, name string, w watch.Interface, see func(*corev1.Pod) (bool, error), deleted func() error, tick <-chan time.Time, node *string) (bool, error) {
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				return true, deleted()
			}
			if p, ok := ev.Object.(*corev1.Pod); ok {
				if done, err := see(p); done {
					return true, err
				}
			}
		case <-tick:
			if *node == "" {
				continue
			}
			n, found, err := k.node(ctx, *node)
			if err != nil {
				continue // the watch shows whether the API server is gone
			}
			if !found {
				return true, k.lost(ctx, &sandbox.LostError{Sandbox: name, Node: *node, Reason: "NodeGone", Detail: "the node was removed from the cluster"})
			}
			if l := nodeLoss(name, n); l != nil {
				return true, k.lost(ctx, l)
			}
		}
	}
}

func (k *Backend) podLogs(ctx context.Context, name string) (string, error) {
	b, err := k.cs.CoreV1().Pods(k.ns).GetLogs(name, &corev1.PodLogOptions{Container: kubeContainer}).DoRaw(ctx)
	if err != nil {
		return "", k.apiErr("read pod logs", err)
	}
	return string(b), nil
}

// deletePod deletes a pod at once; a pod already gone is fine. It runs on
// its own short context.
func (k *Backend) deletePod(ctx context.Context, name string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), seam.TeardownTimeout)
	defer cancel()
	err := k.cs.CoreV1().Pods(k.ns).Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	if err != nil && !apierrors.IsNotFound(err) {
		return k.apiErr("delete pod", err)
	}
	return nil
}

// exec runs cmd in the pod's sandbox container through the API server
// (WebSocket, falling back to SPDY). A non-zero exit is returned as the
// code, not as an error.
// streamExecutor streams a pod subresource request (exec, attach) over
// WebSocket, falling back to SPDY where the API server does not upgrade.
func (k *Backend) streamExecutor(req *rest.Request) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(k.rc, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(k.rc, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

func (k *Backend) execStream(ctx context.Context, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(k.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: kubeContainer, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec)
	ex, err := k.streamExecutor(req)
	if err != nil {
		return -1, fmt.Errorf("exec: %w", err)
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ce utilexec.CodeExitError
	if errors.As(err, &ce) {
		return ce.Code, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("exec %q: %w", cmd[0], ctx.Err())
		}
		return -1, k.execErr(pod, err)
	}
	return 0, nil
}

// execErr explains a failed exec: a pod that stopped or vanished is
// sandbox.ErrNotRunning, anything else a cluster error.
func (k *Backend) execErr(pod string, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, gerr := k.cs.CoreV1().Pods(k.ns).Get(ctx, pod, metav1.GetOptions{})
	if apierrors.IsNotFound(gerr) {
		return fmt.Errorf("%w: pod %s is gone: %w", sandbox.ErrNotRunning, pod, err)
	}
	if gerr == nil {
		if ok, perr := podState(p); !ok && perr != nil {
			return fmt.Errorf("exec: %w: %w", perr, err)
		}
	}
	if errors.Is(k.apiErr("read pod", gerr), sandbox.ErrEngineUnreachable) || seam.IsDialError(gerr) {
		// The stream broke and the API server does not answer: the
		// cluster, not the command, failed.
		return seam.Classified(seam.ErrUnreachable, k.apiErr("exec", errors.Join(err, gerr)))
	}
	return k.apiErr("exec", err)
}

// execWrapper starts a command the way Docker would: the open-file and
// file-size limits Docker sets per container are set here per command (a Pod
// has no field for them), then the working directory, then the command. The
// extra environment comes from env(1) before it. With $4 set, the wrapper
// waits for the command and then prints an acknowledgement: containerd's CRI
// may close a command's stdin once its stdout ends, losing the input, so a
// command fed through stdin prints only after it has consumed its input, and
// the backend checks that line (see ackWriter). Exit 126 means the wrapper
// could not set up.
const execWrapper = `nf=$1; fs=$2; wd=$3; ack=$4; shift 4
ulimit -n "$nf" || exit 126
ulimit -f "$fs" || exit 126
if [ -n "$wd" ]; then cd "$wd" || exit 126; fi
if [ -z "$ack" ]; then exec "$@"; fi
"$@"; rc=$?; echo "` + ackPrefix + `$rc"; exit $rc`

const ackPrefix = "swebox-ack:"

// wrap returns the argv that runs cmd under execWrapper with the spec's
// limits and the working directory wd ("" keeps the pod's).
func wrap(s sandbox.Spec, wd string, ack bool, cmd []string) []string {
	return wrapFileSize(s, strconv.FormatInt(fileSizeBlocks(s), 10), wd, ack, cmd)
}

// fileSizeBlocks is the spec's file size limit in sh's ulimit -f unit,
// 512-byte blocks, at least one.
func fileSizeBlocks(s sandbox.Spec) int64 { return max(s.Limits.FileSize/512, 1) }

// wrapFileSize is wrap with the file size limit given as ulimit -f takes it
// (a number of blocks or "unlimited").
func wrapFileSize(s sandbox.Spec, blocks, wd string, ack bool, cmd []string) []string {
	a := ""
	if ack {
		a = "ack"
	}
	argv := []string{"/bin/sh", "-c", execWrapper, "swebox-exec", strconv.FormatInt(s.Limits.NoFile, 10), blocks, wd, a}
	return append(argv, cmd...)
}
