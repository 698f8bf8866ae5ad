package kube

import (
	"context"
	"maps"
	"sort"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetNodeView makes b see the cluster's nodes with those named marked
// NotReady, as if they had been when b looked, until ClearNodeView.
func SetNodeView(b *Backend, notReady ...string) error {
	list, err := b.cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	b.loss.mu.Lock()
	defer b.loss.mu.Unlock()
	b.loss.nodes = map[string]*corev1.Node{}
	for i := range list.Items {
		n := &list.Items[i]
		for _, name := range notReady {
			if n.Name != name {
				continue
			}
			for j, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					n.Status.Conditions[j].Status = corev1.ConditionFalse
				}
			}
		}
		b.loss.nodes[n.Name] = n
	}
	b.loss.at = time.Now().Add(time.Hour) // not refreshed meanwhile
	return nil
}

// ClearNodeView makes b read the node list afresh.
func ClearNodeView(b *Backend) {
	b.loss.mu.Lock()
	defer b.loss.mu.Unlock()
	b.loss.nodes = nil
}

// ProvenNodes lists the nodes where b proved network isolation, once the
// proofs under way have ended.
func ProvenNodes(b *Backend) []string {
	b.probeMu.Lock()
	proofs := maps.Clone(b.proofs)
	b.probeMu.Unlock()
	var out []string
	for n, p := range proofs {
		if <-p.done; p.err == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ForgetProofs forgets the nodes that this process's backends proved, so
// that the next backend probes every node itself.
func ForgetProofs() {
	processProofs.mu.Lock()
	defer processProofs.mu.Unlock()
	clear(processProofs.proven)
}

// GateProofs makes each node proof that b starts from now on wait for a
// value from gate, and fail with it when it is not nil; a nil gate ends
// that.
func GateProofs(b *Backend, gate <-chan error) {
	if b.test == nil {
		b.test = &testHooks{}
	}
	if gate == nil {
		b.test.proof = nil
		return
	}
	b.test.proof = func(string) error { return <-gate }
}

// CountAgentStreams counts the agent streams b's commands take from now
// on: opened for the command, and spares opened ahead.
func CountAgentStreams(b *Backend) (fresh, spare func() int) {
	var f, s atomic.Int64
	if b.test == nil {
		b.test = &testHooks{}
	}
	b.test.dialed = func(isSpare bool) {
		if isSpare {
			s.Add(1)
		} else {
			f.Add(1)
		}
	}
	return func() int { return int(f.Load()) }, func() int { return int(s.Load()) }
}

// CountProbes counts the nodes b probes from now on.
func CountProbes(b *Backend) (probed func() int) {
	var n atomic.Int64
	if b.test == nil {
		b.test = &testHooks{}
	}
	b.test.probed = func(string) { n.Add(1) }
	return func() int { return int(n.Load()) }
}

// EscapeIsolation makes the sandbox pods that b creates from now on escape
// the namespace's default-deny NetworkPolicy, as pods on a node whose
// enforcer skips them would: they carry the network label of pods with a
// network, which the policy does not select, while b still treats them as
// pods without one. Each pod's own isolation probe prints its user and
// group ids first ("uid U:G"). It returns how many pods escaped so far.
func EscapeIsolation(b *Backend) (escaped func() int) {
	var n atomic.Int64
	b.test = &testHooks{
		pod: func(p *corev1.Pod) {
			p.Labels[LabelNetwork] = "open"
			n.Add(1)
		},
		probe: func(cmd []string) []string {
			return append([]string{"/bin/sh", "-c", `echo "uid $(id -u):$(id -g)"; exec "$@"`, "swebox-uid"}, cmd...)
		},
	}
	return func() int { return int(n.Load()) }
}
