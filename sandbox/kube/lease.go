package kube

import (
	"context"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// A pod lives no longer than the process that created it: its main process
// is seam.LeasedKeepalive, which ends when its standard input ends, and the
// container's input is open only to one attach (stdin, stdinOnce) that the
// client makes when the pod starts and holds until it removes the pod.
// When the process ends, however it ends, the connection to the API server
// closes, the kubelet closes the container's input, the main process ends
// and the pod completes (phase Succeeded): it holds no CPU or memory, and a
// Prune removes the object. Nothing in the pod can hold the lease open: the
// write end is the client's connection.

// lease makes pod's container take its input from the client's lease.
func lease(pod *corev1.Pod) {
	c := &pod.Spec.Containers[0]
	c.Stdin, c.StdinOnce = true, true
}

// holdLease attaches to the input of pod id's main process and holds it
// open until the returned release is called. The attach runs on a context
// of its own; one that fails leaves the pod to its deadline, and is logged.
func (k *Backend) holdLease(id string) (release func()) {
	req := k.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(k.ns).Name(id).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: kubeContainer, Stdin: true}, scheme.ParameterCodec)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	release = sync.OnceFunc(func() {
		cancel()
		_ = pw.Close()
	})
	ex, err := k.streamExecutor(req)
	if err != nil {
		k.log.Warn("no lease on the pod", "pod", id, "err", err)
		return release
	}
	go func() {
		err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr})
		if err != nil && ctx.Err() == nil {
			k.log.Warn("the lease on the pod ended", "pod", id, "err", err)
		}
	}()
	return release
}
