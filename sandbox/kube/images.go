package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/swebox/swebox/sandbox"
)

// Image placement. On a real cluster a node pulls a pod's image from a
// registry when the pod starts, and for evaluations of many instances, each
// with an image of its own, those pulls take most of the wall time. So the
// backend places each pod by its image:
//
//   - a node that holds the image (the kubelet lists a node's images in its
//     status; the backend also remembers the pulls it saw finish) takes the
//     pod, as a rule, when one of those nodes has room for it (by the
//     requests of the namespace's pods against the node's allocatable CPU
//     and memory) or no other node does;
//   - otherwise the pod claims one node that neither holds the image nor
//     is pulling it (one with room, then the one pulling the fewest other
//     images, then the one with the most CPU left): that node pulls it, and
//     until its pull has ended no other pod of the image is sent there;
//   - when no node holds the image and every other node is pulling it, the
//     pod waits for a pull to end and then goes where the image is.
//
// So, among this backend's pods, a node never pulls one image twice at
// once, and never again once it holds it. WarmImage uses the same claims: a
// short-lived pod of the image on a claimed node, removed once the image is
// there, so that a caller pulls its next images while its current pods run.
// Backends of other processes do not share claims; they see each other's
// finished pulls in the nodes' status.
//
// WithImageAffinity(false) turns all of this off: pods then go wherever the
// scheduler puts them, pulling as they start.

// WithImageAffinity turns the image placement above on or off. Default on.
func WithImageAffinity(on bool) Option {
	return func(o *options) error {
		o.noImageAffinity = !on
		return nil
	}
}

// LabelPrepull marks the pods WarmImage makes.
const LabelPrepull = "swebox.prepull"

// imagePlacer records the pulls this backend claimed, by image and node.
type imagePlacer struct {
	mu    sync.Mutex
	pulls map[string]map[string]*nodePull // image ref → node → its last claimed pull
}

// nodePull is one node's claimed pull of one image.
type nodePull struct {
	placer      *imagePlacer
	image, node string
	done        chan struct{} // closed when the pull has ended
	held        bool          // the pull succeeded; set before done is closed
	once        sync.Once
}

// end records how the pull ended; only the first call counts.
func (p *nodePull) end(held bool) {
	if p == nil {
		return
	}
	p.once.Do(func() {
		p.placer.mu.Lock()
		p.held = held
		p.placer.mu.Unlock()
		close(p.done)
	})
}

// imageRef is the name a node reports for an image a pod names: a
// reference made canonical (docker.io/library/ and :latest made explicit),
// as containerd stores it. A name that does not parse stays as it is.
func imageRef(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return image
	}
	return reference.TagNameOnly(named).String()
}

// nodeHolds reports whether the node's status lists the image.
func nodeHolds(n *corev1.Node, ref string) bool {
	for _, img := range n.Status.Images {
		for _, name := range img.Names {
			if name == ref || imageRef(name) == ref {
				return true
			}
		}
	}
	return false
}

// placement is what decide chose for a pod of an image.
type placement struct {
	nodes []string // the pod must run on one of these; nil: anywhere
	claim string   // the node that is to pull the image ("": none)
	wait  bool     // every candidate is pulling the image: wait for one
}

// placeInput is what decide chooses from.
type placeInput struct {
	eligible []string        // nodes the pod may run on, sorted
	holds    map[string]bool // the node holds the image
	pulling  map[string]bool // a claimed pull of the image runs there
	busy     map[string]int  // claimed pulls of any image running there
	// room reports whether a node has room for the pod; free ranks nodes
	// by the CPU they have left (milli-CPUs).
	room func(node string) bool
	free func(node string) int64
}

// decide applies the placement rules of the package comment.
func decide(in placeInput) placement {
	var holding, pulling, free []string
	for _, n := range in.eligible {
		switch {
		case in.holds[n]:
			holding = append(holding, n)
		case in.pulling[n]:
			pulling = append(pulling, n)
		default:
			free = append(free, n)
		}
	}
	anyRoom := func(nodes []string) bool {
		for _, n := range nodes {
			if in.room(n) {
				return true
			}
		}
		return false
	}
	switch {
	case len(holding) > 0 && (anyRoom(holding) || !anyRoom(free)):
		return placement{nodes: holding}
	case len(holding) == 0 && len(pulling) > 0:
		return placement{wait: true}
	case len(free) > 0:
		sort.SliceStable(free, func(i, j int) bool {
			ri, rj := in.room(free[i]), in.room(free[j])
			if ri != rj {
				return ri
			}
			// Pulls spread over the nodes: a node already pulling
			// other images would take this one's pods late.
			if bi, bj := in.busy[free[i]], in.busy[free[j]]; bi != bj {
				return bi < bj
			}
			return in.free(free[i]) > in.free(free[j])
		})
		return placement{nodes: []string{free[0]}, claim: free[0]}
	}
	return placement{}
}

// nodeLoad is what the namespace's pods ask of each node.
type nodeLoad map[string]struct{ cpu, mem int64 }

// load sums the requests of the namespace's pods that are bound to a node
// and not finished.
func (k *Backend) load(ctx context.Context) (nodeLoad, error) {
	pods, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName!=",
	})
	if err != nil {
		return nil, k.apiErr("list pods", err)
	}
	out := nodeLoad{}
	for _, p := range pods.Items {
		l := out[p.Spec.NodeName]
		for _, c := range p.Spec.Containers {
			l.cpu += c.Resources.Requests.Cpu().MilliValue()
			l.mem += c.Resources.Requests.Memory().Value()
		}
		out[p.Spec.NodeName] = l
	}
	return out, nil
}

// placeImage chooses the nodes a pod of image may run on among the
// eligible ones (within proven, the nodes whose isolation proof passed or
// is under way, when it is not empty), waiting while every candidate is
// pulling the image. It returns the pull the pod claims (nil: none), which
// the caller ends. With placement off, or no eligible node, it leaves the
// choice to the scheduler (within proven).
func (k *Backend) placeImage(ctx context.Context, pod *corev1.Pod, image string, proven []string) (*nodePull, error) {
	if k.noImageAffinity || image == "" {
		if len(proven) > 0 {
			onlyNodes(pod, proven)
		}
		return nil, nil
	}
	var cpu, mem int64
	for _, c := range pod.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value()
	}
	ref := imageRef(image)
	for {
		nodes, err := k.nodes(ctx)
		if err != nil {
			return nil, err
		}
		eligible, holds := k.eligible(nodes, ref, proven)
		in := placeInput{eligible: eligible, holds: holds, room: func(string) bool { return true }, free: func(string) int64 { return 0 }}
		var someHold, someFree bool
		for _, n := range eligible {
			someHold = someHold || holds[n]
			someFree = someFree || !holds[n]
		}
		if someHold && someFree {
			// Whether a holding node has room decides between it and a
			// pull elsewhere.
			l, err := k.load(ctx)
			if err != nil {
				return nil, err
			}
			alloc := map[string]corev1.ResourceList{}
			for _, n := range nodes {
				alloc[n.Name] = n.Status.Allocatable
			}
			in.room = func(n string) bool {
				a := alloc[n]
				return a.Cpu().MilliValue()-l[n].cpu >= cpu && a.Memory().Value()-l[n].mem >= mem
			}
			in.free = func(n string) int64 {
				a := alloc[n]
				return a.Cpu().MilliValue() - l[n].cpu
			}
		}
		p, pull, wait := k.placer.place(ref, in)
		if pull != nil || wait == nil {
			switch {
			case len(p.nodes) > 0:
				onlyNodes(pod, p.nodes)
			case len(proven) > 0:
				onlyNodes(pod, proven)
			}
			if pull != nil {
				k.log.Debug("node claimed to pull image", "image", image, "node", pull.node)
			}
			return pull, nil
		}
		// Decided again when the pull ends, or after lossPoll: a node that
		// turned NotReady or was lost meanwhile is no longer waited for.
		t := time.NewTimer(lossPoll)
		select {
		case <-wait:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("wait for a node's pull of %s: %w", image, ctx.Err())
		}
		t.Stop()
	}
}

// eligible lists the nodes a pod may be sent to (Ready, schedulable,
// untainted, not recently lost, within proven when it is not empty) and
// which of them the status says hold ref.
func (k *Backend) eligible(nodes []*corev1.Node, ref string, proven []string) ([]string, map[string]bool) {
	lost := map[string]bool{}
	for _, n := range k.lostNodes() {
		lost[n] = true
	}
	var only map[string]bool
	if len(proven) > 0 {
		only = map[string]bool{}
		for _, n := range proven {
			only[n] = true
		}
	}
	var out []string
	holds := map[string]bool{}
	for _, n := range nodes {
		if n.Spec.Unschedulable || !nodeReady(n) || lost[n.Name] || only != nil && !only[n.Name] || hardTaint(n) {
			continue
		}
		out = append(out, n.Name)
		holds[n.Name] = nodeHolds(n, ref)
	}
	sort.Strings(out)
	return out, holds
}

// hardTaint reports a taint that keeps the backend's pods (which tolerate
// nothing) off the node.
func hardTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return true
		}
	}
	return false
}

// place decides with the recorded pulls and records the claim, atomically:
// two pods deciding at once never claim the same node for one image. It
// returns the claimed pull, or a channel to wait on when the pod must wait.
func (ip *imagePlacer) place(ref string, in placeInput) (placement, *nodePull, <-chan struct{}) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.pulls == nil {
		ip.pulls = map[string]map[string]*nodePull{}
	}
	recorded := ip.pulls[ref]
	holds := make(map[string]bool, len(in.holds))
	for n, h := range in.holds {
		holds[n] = h
	}
	in.pulling = map[string]bool{}
	var waitOn <-chan struct{}
	for n, p := range recorded {
		select {
		case <-p.done:
			holds[n] = holds[n] || p.held
		default:
			in.pulling[n] = true
			waitOn = p.done
		}
	}
	in.holds = holds
	in.busy = map[string]int{}
	for _, byNode := range ip.pulls {
		for n, p := range byNode {
			select {
			case <-p.done:
			default:
				in.busy[n]++
			}
		}
	}
	p := decide(in)
	switch {
	case p.wait:
		return p, nil, waitOn
	case p.claim != "":
		pull := &nodePull{placer: ip, image: ref, node: p.claim, done: make(chan struct{})}
		if recorded == nil {
			recorded = map[string]*nodePull{}
			ip.pulls[ref] = recorded
		}
		recorded[p.claim] = pull
		return p, pull, nil
	}
	return p, nil, nil
}

// watchPull ends pull when pod name's image has been pulled (held), or the
// pull failed or the pod is gone (not held). It runs on a context of its
// own, bounded by the pod's deadline.
func (k *Backend) watchPull(name string, pull *nodePull) {
	if pull == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultPodDeadline)
		defer cancel()
		err := k.waitPulled(ctx, name)
		pull.end(err == nil)
		if err != nil {
			k.log.Debug("claimed pull ended without the image", "image", pull.image, "node", pull.node, "pod", name, "err", err)
		}
	}()
}

// errPodGone: the pod was deleted before its image was pulled.
var errPodGone = errors.New("the pod is gone")

// pulledState reports whether the node has pulled the image of p's
// containers (all of a sandbox pod's run the sandbox's image; an init
// container that seeds a volume pulls it first): done with nil, failed to
// (done, the error), or not yet.
func pulledState(p *corev1.Pod) (bool, error) {
	if l := podLoss(p); l != nil {
		return true, l
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.ImageID != "" || cs.State.Running != nil || cs.State.Terminated != nil {
			return true, nil
		}
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff":
				return true, pullError(p, cs, w)
			case "ErrImageNeverPull", "InvalidImageName":
				return true, &PodError{Pod: p.Name, Node: p.Spec.NodeName, Reason: w.Reason, Detail: w.Message}
			case "CreateContainerError", "RunContainerError", "CreateContainerConfigError":
				// The image is there; the container could not be made of it.
				return true, nil
			}
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		return true, &PodError{Pod: p.Name, Node: p.Spec.NodeName, Reason: string(p.Status.Phase), Detail: p.Status.Reason + " " + p.Status.Message}
	}
	return p.Status.Phase == corev1.PodSucceeded, nil
}

// waitPulled watches pod name until pulledState says done.
func (k *Backend) waitPulled(ctx context.Context, name string) error {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	for {
		list, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return k.apiErr("read pod", err)
		}
		if len(list.Items) == 0 {
			return errPodGone
		}
		if done, err := pulledState(&list.Items[0]); done {
			return err
		}
		w, err := k.cs.CoreV1().Pods(k.ns).Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return k.apiErr("watch pod", err)
		}
		done, err := func() (bool, error) {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Deleted {
					return true, errPodGone
				}
				if p, ok := ev.Object.(*corev1.Pod); ok {
					if done, err := pulledState(p); done {
						return true, err
					}
				}
			}
			return false, nil
		}()
		if done {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wait for the pull of pod %s: %w", name, ctx.Err())
		}
	}
}

// prepullDeadline caps a WarmImage pod's life.
const prepullDeadline = time.Hour

// WarmImage returns once an eligible node holds image: at once when one
// does, after that pull when one is under way, else after a short-lived
// pod of the image (hardened like a sandbox, labelled with labels and
// LabelPrepull, running `exit 0`) has made a claimed node pull it; the pod
// is removed before it returns. A pull the registry refused is an
// *sandbox.ImageError carrying the node's account of the registry's answer.
// With WithImageAffinity(false) it returns an error wrapping
// sandbox.ErrNotSupported: warming a node is pointless when pods do not go
// where their image is.
func (k *Backend) WarmImage(ctx context.Context, image string, labels map[string]string) error {
	if k.noImageAffinity {
		return fmt.Errorf("warm image %s: image placement is off: %w", image, sandbox.ErrNotSupported)
	}
	return k.warm(ctx, image, labels, "")
}

// warm is WarmImage on node, or on the node placement chooses when node
// is "".
func (k *Backend) warm(ctx context.Context, image string, labels map[string]string, node string) error {
	s := k.env.Defaults(sandbox.Spec{Image: image})
	pl := make(map[string]string, len(labels)+1)
	for key, v := range labels {
		pl[key] = v
	}
	pl[LabelPrepull] = "true"
	pod, err := podFor(s, []string{"/bin/sh", "-c", "exit 0"}, pl, k.pull)
	if err != nil {
		return err
	}
	pod.GenerateName = "swebox-prepull-"
	pod.Spec.ActiveDeadlineSeconds = ptr(int64(prepullDeadline / time.Second))
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	limit := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: small, Limits: limit}
	ref := imageRef(image)
	var pull *nodePull
	for pull == nil {
		nodes, err := k.nodes(ctx)
		if err != nil {
			return err
		}
		eligible, holds := k.eligible(nodes, ref, nil)
		if node != "" {
			eligible = []string{node}
			holds = map[string]bool{}
			if n, found, err := k.node(ctx, node); err == nil && found {
				holds[node] = nodeHolds(n, ref)
			}
		}
		in := placeInput{eligible: eligible, holds: holds, room: func(string) bool { return true }, free: func(string) int64 { return 0 }}
		p, claimed, wait := k.placer.place(ref, in)
		switch {
		case claimed != nil:
			pull = claimed
			onlyNodes(pod, p.nodes)
		case wait != nil:
			t := time.NewTimer(lossPoll)
			select {
			case <-wait:
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("warm image %s: %w", image, ctx.Err())
			}
			t.Stop()
		default:
			return nil // a node holds it, or there is no node to warm
		}
	}
	name, err := k.createPod(ctx, pod, false)
	if err != nil {
		pull.end(false)
		return fmt.Errorf("warm image %s on node %s: %w", image, pull.node, err)
	}
	err = k.waitPulled(ctx, name)
	pull.end(err == nil)
	if derr := k.deletePod(ctx, name); derr != nil {
		k.log.Warn("remove a prepull pod", "pod", name, "err", derr)
	}
	if err != nil {
		return fmt.Errorf("warm image %s on node %s: %w", image, pull.node, err)
	}
	k.log.Debug("image warmed", "image", image, "node", pull.node)
	return nil
}
