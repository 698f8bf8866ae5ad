package kube

import (
	"context"
	"fmt"
	"github.com/swebox/swebox/sandbox"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultNodeGrace is the node-monitor-grace-period of kube-controller-manager
// by default: how long a node whose kubelet went silent stays Ready.
const DefaultNodeGrace = 50 * time.Second

// Timing of loss detection.
const (
	// lossPoll is how often a running command's pod and node are checked,
	// and how long the node list is reused.
	lossPoll = 3 * time.Second
	// nodeGraceSlack is added to the node grace period: the node lifecycle
	// controller notices a silent node on its next pass (5 s by default).
	nodeGraceSlack = 15 * time.Second
	// avoidLostNodes is how long new pods prefer other nodes than one that
	// lost a pod.
	avoidLostNodes = 30 * time.Minute
)

// lossKeeper holds what the backend knows of node health: a short-lived
// copy of the node list, and the nodes that lost pods of this client.
type lossKeeper struct {
	mu    sync.Mutex
	at    time.Time
	nodes map[string]*corev1.Node
	lost  map[string]time.Time
}

// node returns the named node from a node list at most lossPoll old; found
// is false when the cluster has no such node.
func (k *Backend) node(ctx context.Context, name string) (n *corev1.Node, found bool, err error) {
	lk := &k.loss
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if err := k.refreshNodes(ctx); err != nil {
		return nil, false, err
	}
	n, found = lk.nodes[name]
	return n, found, nil
}

// nodes returns a node list at most lossPoll old.
func (k *Backend) nodes(ctx context.Context) ([]*corev1.Node, error) {
	lk := &k.loss
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if err := k.refreshNodes(ctx); err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, 0, len(lk.nodes))
	for _, n := range lk.nodes {
		out = append(out, n)
	}
	return out, nil
}

// refreshNodes reads the node list when the one held is older than
// lossPoll; the caller holds k.loss.mu.
func (k *Backend) refreshNodes(ctx context.Context) error {
	lk := &k.loss
	if lk.nodes == nil || time.Since(lk.at) > lossPoll {
		list, err := k.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return k.apiErr("list nodes", err)
		}
		lk.nodes = make(map[string]*corev1.Node, len(list.Items))
		for i := range list.Items {
			lk.nodes[list.Items[i].Name] = &list.Items[i]
		}
		lk.at = time.Now()
	}
	return nil
}

// markLost records that node lost a pod and deletes the pod at once (grace
// 0): on a node whose kubelet is gone nothing else would remove it for
// minutes.
func (k *Backend) markLost(ctx context.Context, l *sandbox.LostError) {
	if l.Node != "" {
		k.loss.mu.Lock()
		if k.loss.lost == nil {
			k.loss.lost = map[string]time.Time{}
		}
		k.loss.lost[l.Node] = time.Now()
		k.loss.nodes = nil // read the nodes afresh next time
		k.loss.mu.Unlock()
	}
	if err := k.deletePod(ctx, l.Sandbox); err != nil {
		k.log.Debug("delete lost pod", "pod", l.Sandbox, "err", err)
	}
	k.log.Debug("sandbox pod lost", "pod", l.Sandbox, "node", l.Node, "reason", l.Reason)
}

// lostNodes lists the nodes that lost a pod of this client recently.
func (k *Backend) lostNodes() []string {
	k.loss.mu.Lock()
	defer k.loss.mu.Unlock()
	var out []string
	for n, at := range k.loss.lost {
		if time.Since(at) < avoidLostNodes {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// avoidNodes makes pod prefer nodes other than those listed. A preference,
// not a rule: a node that lost a pod may be the only one left, and the
// taints of a NotReady node already keep the scheduler away from it.
func avoidNodes(pod *corev1.Pod, nodes []string) {
	if len(nodes) == 0 {
		return
	}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	// A node field selector takes one value (the API server refuses more),
	// so each node is a preference of its own.
	na := pod.Spec.Affinity.NodeAffinity
	for _, n := range nodes {
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, corev1.PreferredSchedulingTerm{
			Weight: 100,
			Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{n},
			}}},
		})
	}
}

// onlyNodes makes pod run on one of nodes: a rule, for the nodes where
// network isolation is proven or being proven.
func onlyNodes(pod *corev1.Pod, nodes []string) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	// A node field selector takes one value, so each node is a term of its
	// own; terms are alternatives.
	terms := make([]corev1.NodeSelectorTerm, 0, len(nodes))
	for _, n := range nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n},
		}}})
	}
	pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
}

// lostPodReasons are the reasons of a failed pod that the node, not the
// pod's processes, caused.
var lostPodReasons = map[string]bool{
	"Evicted": true, "Preempting": true, "Terminated": true, "Shutdown": true, "NodeShutdown": true,
	"NodeLost": true, "UnexpectedAdmissionError": true, "OutOfcpu": true, "OutOfmemory": true, "OutOfpods": true,
}

// podLoss reports whether the pod object itself says the cluster took the
// pod away: being deleted, a DisruptionTarget condition, or a failure for
// a reason of the node.
func podLoss(p *corev1.Pod) *sandbox.LostError {
	lost := func(reason, detail string) *sandbox.LostError {
		return &sandbox.LostError{Sandbox: p.Name, Node: p.Spec.NodeName, Reason: reason, Detail: detail}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return lost(c.Reason, c.Message)
		}
	}
	if p.Status.Phase == corev1.PodFailed && lostPodReasons[p.Status.Reason] {
		return lost(p.Status.Reason, p.Status.Message)
	}
	if p.DeletionTimestamp != nil {
		return lost("Deleted", "the pod is being deleted")
	}
	return nil
}

// nodeLoss reports a node that no longer runs pods: not Ready, or tainted
// as unreachable or not ready.
func nodeLoss(pod string, n *corev1.Node) *sandbox.LostError {
	lost := func(reason, detail string) *sandbox.LostError {
		return &sandbox.LostError{Sandbox: pod, Node: n.Name, Reason: reason, Detail: detail}
	}
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch c.Status {
		case corev1.ConditionFalse:
			return lost("NodeNotReady", fmt.Sprintf("node %s is not ready since %s: %s", n.Name, c.LastTransitionTime.UTC().Format(time.RFC3339), c.Message))
		case corev1.ConditionUnknown:
			return lost("NodeUnreachable", fmt.Sprintf("node %s stopped reporting; not ready since %s: %s", n.Name, c.LastTransitionTime.UTC().Format(time.RFC3339), c.Message))
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady) {
			return lost("NodeUnreachable", fmt.Sprintf("node %s has the taint %s", n.Name, t.Key))
		}
	}
	return nil
}

// checkLost reads the pod and its node: a *sandbox.LostError when the cluster
// lost the pod, nil when it has not, or an error when the API server did
// not answer.
func (k *Backend) checkLost(ctx context.Context, name string) (*sandbox.LostError, error) {
	_, l, err := k.readLoss(ctx, name)
	return l, err
}

// readLoss is checkLost that also returns the pod read (nil when gone).
func (k *Backend) readLoss(ctx context.Context, name string) (*corev1.Pod, *sandbox.LostError, error) {
	p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &sandbox.LostError{Sandbox: name, Reason: "Deleted", Detail: "the pod was deleted"}, nil
	}
	if err != nil {
		return nil, nil, k.apiErr("read pod", err)
	}
	l, err := k.podOrNodeLoss(ctx, p)
	return p, l, err
}

// podOrNodeLoss is checkLost for a pod already read.
func (k *Backend) podOrNodeLoss(ctx context.Context, p *corev1.Pod) (*sandbox.LostError, error) {
	if l := podLoss(p); l != nil {
		return l, nil
	}
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	n, found, err := k.node(ctx, p.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	if !found {
		return &sandbox.LostError{Sandbox: p.Name, Node: p.Spec.NodeName, Reason: "NodeGone", Detail: "the node was removed from the cluster"}, nil
	}
	return nodeLoss(p.Name, n), nil
}

// watchLoss checks the pod every lossPoll until ctx ends or the pod is
// lost, and then calls onLost with the loss. Errors of the API server are
// left to the command's own stream to show.
func (k *Backend) watchLoss(ctx context.Context, name string, onLost func(*sandbox.LostError)) {
	t := time.NewTicker(lossPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if l, err := k.checkLost(ctx, name); err == nil && l != nil {
			onLost(l)
			return
		}
	}
}

// confirmLoss explains an exec stream that failed while ctx was live: it
// returns the *sandbox.LostError when the pod was lost, or nil when the pod and
// its kubelet are fine (the failure was the stream's own) or the pod
// stopped for a reason of its own (its deadline, its main process). The kubelet may
// have stopped while its node still shows Ready; then it waits, checking
// every lossPoll, for the node to turn NotReady or the kubelet to answer a
// probe command, for at most the node grace period plus nodeGraceSlack, and
// past that counts the pod as lost to an unreachable kubelet.
func (k *Backend) confirmLoss(ctx context.Context, name string, streamErr error) (*sandbox.LostError, error) {
	deadline := time.Now().Add(k.nodeGraceOr() + nodeGraceSlack)
	for {
		p, l, err := k.readLoss(ctx, name)
		if err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
		if running, perr := podState(p); !running && perr != nil {
			return nil, nil // stopped for a reason of its own: not lost
		}
		if k.kubeletAnswers(ctx, name) {
			return nil, nil
		}
		if time.Now().After(deadline) {
			n := ""
			if p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				n = p.Spec.NodeName
			}
			return &sandbox.LostError{Sandbox: name, Node: n, Reason: "KubeletUnreachable",
				Detail: fmt.Sprintf("commands in the pod fail (%v) and the node still shows Ready after %s", streamErr, k.nodeGraceOr()+nodeGraceSlack)}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lossPoll):
		}
	}
}

func (k *Backend) nodeGraceOr() time.Duration {
	if k.nodeGrace > 0 {
		return k.nodeGrace
	}
	return DefaultNodeGrace
}

// kubeletAnswers runs `true` in the pod's sandbox container.
func (k *Backend) kubeletAnswers(ctx context.Context, name string) bool {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	code, err := k.execStream(pctx, name, []string{"/bin/sh", "-c", ":"}, nil, nil, nil)
	return err == nil && code == 0
}

// lost records a loss and returns it as the error to report. A pod this
// client deleted itself (Stop, Kill, Remove) was not lost: that is a
// *PodError saying it was deleted.
func (k *Backend) lost(ctx context.Context, l *sandbox.LostError) error {
	if l.Reason == "Deleted" && k.deletedHere(l.Sandbox) {
		return &PodError{Pod: l.Sandbox, Node: l.Node, Reason: "Deleted", Detail: "the pod was deleted"}
	}
	k.markLost(ctx, l)
	return l
}

// deletedHere reports whether this client deleted or is deleting the pod,
// or never knew it.
func (k *Backend) deletedHere(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	info := k.pods[name]
	return info == nil || info.deleted
}

// markDeleted notes that this client is deleting the pod.
func (k *Backend) markDeleted(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if info := k.pods[name]; info != nil {
		info.deleted = true
	}
}
