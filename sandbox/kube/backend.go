package kube

import (
	"context"
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// podInfo is what the backend remembers of a pod it created.
type podInfo struct {
	spec      sandbox.Spec
	cmd       []string // the main process asked for; run by exec in Run's pods
	attached  *attachedRun
	workspace string
	deleted   bool   // Stop or Kill deleted the pod; guarded by Backend.mu
	release   func() // ends the client's lease on the pod (lease.go); guarded by Backend.mu
}

// attachedRun is the main process of a one-shot pod, run through exec.
type attachedRun struct {
	mu   sync.Mutex
	done bool
	code int
}

func (k *Backend) remember(id string, p *podInfo) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods[id] = p
}

func (k *Backend) info(id string) *podInfo {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[id]
}

func (k *Backend) forget(id string) {
	k.mu.Lock()
	p := k.pods[id]
	delete(k.pods, id)
	k.mu.Unlock()
	if p != nil && p.release != nil {
		p.release()
	}
}

func (k *Backend) Host() string { return k.rc.Host }

// Ping checks that the API server answers and that the namespace exists
// (a *NamespaceError when it does not), so that a run is refused before it
// starts anything. A caller that may not read namespaces learns of a
// missing one from its first pod instead.
func (k *Backend) Ping(ctx context.Context) error {
	if _, err := k.cs.Discovery().ServerVersion(); err != nil {
		return kubeErr("read server version", err)
	}
	_, err := k.cs.CoreV1().Namespaces().Get(ctx, k.ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return &NamespaceError{Namespace: k.ns, Kubeconfig: k.config}
	case err != nil && !apierrors.IsForbidden(err):
		return kubeErr("read namespace", err)
	}
	return nil
}

func (k *Backend) Runtimes(ctx context.Context) ([]string, error) {
	rcs, err := k.cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, kubeErr("list runtime classes", err)
	}
	names := []string{}
	for _, rc := range rcs.Items {
		names = append(names, rc.Name)
	}
	return names, nil
}

// kubeErr classifies an API error for the logic above the seam.
func kubeErr(op string, err error) error {
	err = fmt.Errorf("%s: %w", op, err)
	switch {
	case apierrors.IsNotFound(err):
		return seam.Classified(seam.ErrNotFound, err)
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return seam.Classified(seam.ErrConflict, err)
	case seam.IsDialError(err):
		return seam.Classified(seam.ErrUnreachable, err)
	}
	return err
}

// create submits the pod (a pod starts once it exists; start waits for it).
// A sandbox without a network goes to a Ready node whose isolation proof is
// under way or passed (startProofs); Start waits for it.
func (k *Backend) Create(ctx context.Context, req seam.CreateRequest[sandbox.Spec]) (string, error) {
	s := req.Spec
	if s.Limits.PidsLimit != sandbox.DefaultPidsLimit {
		// A Pod has no pids field; the kubelet's podPidsLimit caps every
		// pod of a node alike.
		return "", &sandbox.SpecError{Field: "sandbox.Limits.PidsLimit", Reason: fmt.Sprintf("on Kubernetes the nodes' podPidsLimit applies; only the default %d is accepted", sandbox.DefaultPidsLimit)}
	}
	var proving []string
	if s.Relax.Network == "" {
		var err error
		if proving, err = k.startProofs(ctx, s.Image, req.Labels); err != nil {
			return "", err
		}
	}
	pod, err := podFor(s, seam.LeasedKeepalive, req.Labels, k.pull)
	if err != nil {
		return "", err
	}
	lease(pod)
	pull, err := k.placeImage(ctx, pod, s.Image, proving)
	if err != nil {
		return "", err
	}
	avoidNodes(pod, k.lostNodes())
	if k.test != nil && k.test.pod != nil {
		k.test.pod(pod)
	}
	name, err := k.createPod(ctx, pod, false)
	if err != nil {
		pull.end(false)
		return "", err
	}
	k.watchPull(name, pull)
	info := &podInfo{spec: s, cmd: req.Cmd, workspace: s.Workspace}
	k.remember(name, info)
	return name, nil
}

// start waits until the pod runs and copies the workspace in. A sandbox
// without a network is held until its node's isolation proof and its own
// probe have both passed.
func (k *Backend) Start(ctx context.Context, id string) error {
	start := time.Now()
	node, err := k.waitRunning(ctx, id)
	if err != nil {
		return err
	}
	running := time.Since(start)
	info := k.info(id)
	if info != nil && info.spec.Relax.Network == "" && !k.trustNP {
		var own error
		probed := make(chan struct{})
		octx, stopOwn := context.WithCancel(ctx)
		defer stopOwn()
		go func() {
			defer close(probed)
			own = k.awaitIsolation(octx, id, info.spec)
			k.log.Debug("pod isolated", "pod", id, "node", node, "after", time.Since(start).Round(time.Millisecond), "running", running.Round(time.Millisecond))
		}()
		// The node's proof, which has a control, is the better witness:
		// a pod's own probe is also refused where the address is out of
		// every pod's reach. When it fails, the pod's probe is moot.
		if err := k.awaitProof(ctx, node); err != nil {
			stopOwn()
			<-probed
			var lost *sandbox.LostError
			if errors.As(err, &lost) && lost.Sandbox != id {
				// The cluster lost a probe pod of the node's proof (the
				// node, most often): it is this sandbox's loss, named
				// as its own so that the caller retries it as one.
				return &sandbox.LostError{Sandbox: id, Node: node, Reason: lost.Reason, Detail: "its node's isolation proof could not finish: " + err.Error()}
			}
			return err
		}
		<-probed
		if own != nil {
			return own
		}
	}
	if info != nil {
		k.mu.Lock()
		leased := info.release != nil
		k.mu.Unlock()
		if !leased { // the attach is made outside the lock
			release := k.holdLease(id)
			k.mu.Lock()
			info.release = release
			k.mu.Unlock()
		}
	}
	if info == nil || info.workspace == "" {
		return nil
	}
	return k.copyWorkspace(ctx, id, info.spec)
}

// awaitIsolation holds a sandbox without a network back until the
// default-deny policy stops its own traffic. A node's enforcer applies the
// policy to a new pod some time after the pod runs (about a second on the
// test cluster), and a command run in that window reached the API server:
// proving the node once is not enough for each pod. The probe runs in the
// pod itself, as the sandbox's user, until a connection to the API server's
// address fails; the image has python3 or bash, as the node's proof needs.
func (k *Backend) awaitIsolation(ctx context.Context, id string, s sandbox.Spec) error {
	host, port, err := apiHostPort(k.rc.Host)
	if err != nil {
		return err
	}
	cmd := []string{"/bin/sh", "-c", probeScript, "swebox-probe", host, port, strconv.Itoa(probeTries), "deny", "1"}
	if k.test != nil && k.test.probe != nil {
		cmd = k.test.probe(cmd)
	}
	var out strings.Builder
	st, err := k.Exec(ctx, id, seam.ExecCall{Cmd: cmd, User: s.User, Stdio: seam.Stdio{Stdout: &out, Stderr: &out}})
	if err != nil {
		return fmt.Errorf("wait for the network policy to isolate pod %s: %w", id, err)
	}
	if st.ExitCode != 0 {
		node := ""
		if p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, id, metav1.GetOptions{}); err == nil {
			node = p.Spec.NodeName
		}
		return &IsolationError{Namespace: k.ns, Node: node, Target: net.JoinHostPort(host, port), Output: strings.TrimSpace(out.String())}
	}
	return nil
}

// copyWorkspace streams the spec's host workspace into the pod, with the
// path checks and byte cap of CopyIn.
func (k *Backend) copyWorkspace(ctx context.Context, id string, s sandbox.Spec) error {
	fr, fw := io.Pipe()
	uid, gid, _ := seam.ParseUser(s.User)
	go func() { fw.CloseWithError(k.env.TarWorkspace(s.Workspace, uid, gid, fw)) }()
	defer fr.Close()
	var errb strings.Builder
	st, err := k.Exec(ctx, id, seam.ExecCall{
		Cmd: []string{"tar", "-x", "-f", "-", "-C", s.WorkspaceTarget}, User: s.User,
		Stdio: seam.Stdio{Stdin: fr, Stdout: io.Discard, Stderr: &errb},
	})
	if err != nil {
		return fmt.Errorf("copy the workspace in: %w", err)
	}
	if st.ExitCode != 0 {
		return fmt.Errorf("copy the workspace in: tar exited %d: %s", st.ExitCode, strings.TrimSpace(errb.String()))
	}
	return nil
}

// startAttached starts a one-shot pod's command: the pod idles and the
// command runs through exec, wired to s, as its main process.
func (k *Backend) StartAttached(ctx context.Context, id string, s seam.Stdio) (*seam.MainProcess, error) {
	if err := k.Start(ctx, id); err != nil {
		return nil, err
	}
	info := k.info(id)
	if info == nil {
		return nil, seam.Classified(seam.ErrNotFound, fmt.Errorf("pod %s was not created by this client", id))
	}
	run := &attachedRun{}
	info.attached = run
	exited := make(chan seam.MainExit, 1)
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		st, err := k.Exec(streamCtx, id, seam.ExecCall{
			Cmd: info.cmd, User: info.spec.User, Env: []string{seam.MarkerVar + "=" + seam.MainMarker}, Stdio: s,
		})
		code := st.ExitCode
		if err != nil || st.Running {
			code = -1
		}
		run.mu.Lock()
		run.done, run.code = true, code
		run.mu.Unlock()
		exited <- seam.MainExit{Code: code, Err: err}
	}()
	return &seam.MainProcess{Exited: exited, Release: cancel}, nil
}

func (k *Backend) Exec(ctx context.Context, id string, call seam.ExecCall) (seam.ExecStatus, error) {
	info := k.info(id)
	s := k.env.Defaults(sandbox.Spec{})
	if info != nil {
		s = info.spec
		if call.User != s.User {
			return seam.ExecStatus{}, &sandbox.SpecError{Field: "ExecRequest.User", Reason: "a command on Kubernetes runs as the pod's user " + s.User + "; set sandbox.Spec.User instead"}
		}
	}
	argv := append([]string{"env"}, call.Env...)
	argv = append(argv, wrap(s, call.WorkingDir, call.Stdin != nil, call.Cmd)...)
	stdout := call.Stdout
	var ack *ackWriter
	if call.Stdin != nil {
		ack = &ackWriter{w: call.Stdout}
		stdout = ack
	}
	code, err := k.execLossAware(ctx, id, argv, call.Stdin, stdout, call.Stderr)
	if err != nil {
		if ctx.Err() != nil {
			return seam.ExecStatus{ExitCode: -1, Running: true}, nil
		}
		return seam.ExecStatus{}, err
	}
	if ack != nil {
		got, ok := ack.finish()
		if !ok {
			return seam.ExecStatus{}, fmt.Errorf("exec %q in pod %s: the command did not acknowledge its standard input (exit %d), so the stream lost data", call.Cmd[0], id, code)
		}
		code = got
	}
	return seam.ExecStatus{ExitCode: code}, nil
}

// execLossAware is execStream that tells a lost pod from a failed
// command: while the command runs, the pod and its node are checked every
// lossPoll, and a loss ends the stream; a stream that fails, or a command
// killed by a signal, is explained by confirmLoss. A loss is returned as a
// *sandbox.LostError, after the pod is deleted.
func (k *Backend) execLossAware(ctx context.Context, id string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	var found *sandbox.LostError
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		k.watchLoss(sctx, id, func(l *sandbox.LostError) {
			if k.deletedHere(id) && l.Reason == "Deleted" {
				return
			}
			found = l
			stopStream()
		})
	}()
	code, err := k.execStream(sctx, id, argv, stdin, stdout, stderr)
	stopStream()
	<-watched
	if found != nil {
		return -1, k.lost(ctx, found)
	}
	if ctx.Err() != nil {
		return code, err
	}
	if lerr := k.explainFailure(ctx, id, code, err); lerr != nil {
		return -1, lerr
	}
	return code, err
}

// explainFailure tells whether a command that failed with err (its stream
// broke) or, with a nil err, exited with code, failed because the pod was
// lost: it returns the *sandbox.LostError to report then, and nil when the
// pod was not lost or the command ended normally (code below 128).
func (k *Backend) explainFailure(ctx context.Context, id string, code int, err error) error {
	if err == nil && code < 128 {
		return nil
	}
	// A stream that broke, or a command that a signal ended (the kubelet
	// kills an evicted pod's processes), may be the pod's loss.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.nodeGraceOr()+nodeGraceSlack+time.Minute)
	defer cancel()
	var l *sandbox.LostError
	var cerr error
	if err != nil {
		l, cerr = k.confirmLoss(cctx, id, err)
	} else {
		// The kubelet may record why it killed the pod (Evicted, a
		// DisruptionTarget condition) only after the kill: a pod that runs
		// no command now is explained as a failed stream is.
		l, cerr = k.checkLost(cctx, id)
		if cerr == nil && l == nil && !k.kubeletAnswers(cctx, id) {
			l, cerr = k.confirmLoss(cctx, id, fmt.Errorf("the command ended by signal %d and the pod runs no command", code-128))
		}
	}
	if cerr == nil && l != nil {
		if lerr := k.lost(cctx, l); errors.As(lerr, &l) {
			return lerr
		}
	}
	return nil
}

func (k *Backend) Inspect(ctx context.Context, id string) (seam.State, error) {
	p, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		return seam.State{}, kubeErr("read pod", err)
	}
	running, _ := podState(p)
	st := seam.State{Running: running}
	if info := k.info(id); info != nil && info.attached != nil {
		run := info.attached
		run.mu.Lock()
		done, code := run.done, run.code
		run.mu.Unlock()
		st.Running = running && !done
		st.ExitCode = code
		if done && code == 128+9 && running {
			st.OOMKilled = k.oomKills(ctx, id, info.spec) > 0
		}
	}
	return st, nil
}

// oomKills reads the pod's memory cgroup OOM kill counter; -1 when it
// cannot.
func (k *Backend) oomKills(ctx context.Context, id string, s sandbox.Spec) int64 {
	var out strings.Builder
	st, err := k.Exec(ctx, id, seam.ExecCall{Cmd: []string{"/bin/sh", "-c", seam.OOMScript}, User: s.User, Env: []string{seam.MarkerVar + "=internal-oom"}, Stdio: seam.Stdio{Stdout: &out, Stderr: io.Discard}})
	if err != nil || st.ExitCode != 0 {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func (k *Backend) Logs(ctx context.Context, id, tail string, stdout, stderr io.Writer) error {
	opts := &corev1.PodLogOptions{Container: kubeContainer}
	if tail != "" && tail != "all" {
		n, err := strconv.ParseInt(tail, 10, 64)
		if err != nil {
			return fmt.Errorf("logs: tail %q: %w", tail, err)
		}
		opts.TailLines = &n
	}
	b, err := k.cs.CoreV1().Pods(k.ns).GetLogs(id, opts).DoRaw(ctx)
	if err != nil {
		return kubeErr("read pod logs", err)
	}
	_, err = stdout.Write(b)
	return err
}

func (k *Backend) Stop(ctx context.Context, id string, grace time.Duration) error {
	k.markDeleted(id)
	secs := int64(grace.Seconds())
	err := k.cs.CoreV1().Pods(k.ns).Delete(ctx, id, metav1.DeleteOptions{GracePeriodSeconds: &secs})
	return kubeErr("delete pod", err)
}

// kill deletes the pod: Kubernetes has no call that signals a container.
func (k *Backend) Kill(ctx context.Context, id, signal string) error {
	k.markDeleted(id)
	err := k.cs.CoreV1().Pods(k.ns).Delete(ctx, id, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	if err != nil {
		return kubeErr("delete pod", err)
	}
	return nil
}

func (k *Backend) Remove(ctx context.Context, id string) error {
	k.forget(id)
	err := k.cs.CoreV1().Pods(k.ns).Delete(ctx, id, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	if err != nil {
		return kubeErr("delete pod", err)
	}
	return nil
}

func (k *Backend) List(ctx context.Context, want map[string]string) ([]seam.Object, error) {
	sel := labels.NewSelector()
	for key, v := range want {
		var r *labels.Requirement
		var err error
		if v == "" {
			r, err = labels.NewRequirement(key, "exists", nil)
		} else {
			r, err = labels.NewRequirement(key, "=", []string{labelValue(v)})
		}
		if err != nil {
			return nil, fmt.Errorf("list pods: label %s: %w", key, err)
		}
		sel = sel.Add(*r)
	}
	pods, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, kubeErr("list pods", err)
	}
	objs := make([]seam.Object, 0, len(pods.Items))
	for _, p := range pods.Items {
		// The selector matched label values, which may stand for other
		// values too: only the exact ones count.
		exact := exactLabels(p.ObjectMeta)
		if !matches(exact, want) {
			continue
		}
		objs = append(objs, seam.Object{Kind: "sandbox", ID: p.Name, Name: p.Name, Labels: exact})
	}
	return objs, nil
}

func (k *Backend) RemoveObject(ctx context.Context, o seam.Object) error {
	if o.Kind != "sandbox" {
		return fmt.Errorf("remove %s %s: %w", o.Kind, o.Name, sandbox.ErrNotSupported)
	}
	return k.Remove(ctx, o.ID)
}

// Close ends the isolation proofs under way and waits until their probe
// pods are deleted. The sandboxes are the caller's to remove.
func (k *Backend) Close() error {
	k.probeMu.Lock()
	k.proofContext() // also before any proof ran: none may start after Close
	k.stopProofs()
	k.probeMu.Unlock()
	k.proofRuns.Wait()
	return nil
}

// ackWriter forwards a command's stdout but holds back its last bytes, where
// ackScript's acknowledgement line ends up, and strips that line.
type ackWriter struct {
	w    io.Writer
	hold []byte
}

const ackHold = 64

func (a *ackWriter) Write(p []byte) (int, error) {
	a.hold = append(a.hold, p...)
	if n := len(a.hold) - ackHold; n > 0 {
		if _, err := a.w.Write(a.hold[:n]); err != nil {
			return 0, err
		}
		a.hold = append(a.hold[:0], a.hold[n:]...)
	}
	return len(p), nil
}

// finish forwards what was held except the acknowledgement, and returns the
// exit code it carried.
func (a *ackWriter) finish() (int, bool) {
	i := strings.LastIndex(string(a.hold), ackPrefix)
	if i < 0 {
		_, _ = a.w.Write(a.hold)
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(a.hold[i+len(ackPrefix):])))
	_, _ = a.w.Write(a.hold[:i])
	return n, err == nil
}
