// Package kube is the Kubernetes backend of package sandbox: it runs each
// sandbox as a Pod of one namespace. Give a [Backend] to sandbox.New with
// sandbox.WithBackend; every method of the resulting sandbox.Client works as
// on Docker, with the differences below. Only programs that import this
// package link client-go.
//
//	b, err := kube.New(kubeconfig, kube.WithNamespace("swebox"))
//	if err != nil {
//		return err
//	}
//	c, err := sandbox.New(sandbox.WithBackend(b))
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//
// A sandbox is a Pod and
// each default maps to a Pod field: runAsUser/runAsGroup/runAsNonRoot,
// readOnlyRootFilesystem, capabilities drop ALL, allowPrivilegeEscalation
// false, seccomp RuntimeDefault, resource limits (OOM kills are reported as
// on Docker), memory-backed emptyDirs with size limits for /tmp and HOME,
// shareProcessNamespace (the pause process reaps), activeDeadlineSeconds,
// no service-account token, no service links. A Pod has no field for the
// rest: open-file and file-size limits are set by the wrapper every command
// starts under, and the pids limit is the nodes' kubelet podPidsLimit (only
// the default Limits.PidsLimit is accepted). Commands go through the same
// exec agent as on Docker, copied into each pod when it starts and reached
// over a port-forward stream (see agent.go; sandbox.WithExecAgent(false)
// turns it off), or through the API server's exec (WebSocket, falling back
// to SPDY) where it cannot start; copies are tar over exec.
// "Network none" is a default-deny NetworkPolicy, which holds only where the
// cluster enforces NetworkPolicy: before the first sandbox without a
// network is handed out on a node, a probe pod there must fail repeatedly to
// reach the API server's address while a control pod beside it keeps
// reaching it; a node that turns Ready or joins later is probed when a
// sandbox may go there. The proof runs while the first sandboxes' pods
// start, which are held until it has passed on their node and their own
// probe is refused. A node's proof holds for every client of the process
// with the same cluster and namespace. The namespace's policies must leave such a
// pod isolated ([PolicyError]). Otherwise the client refuses with an
// [IsolationError] ([ErrNetworkNotEnforced]) unless
// [WithUnprovenNetworkPolicy] relaxes the proof. Commands run as the Pod's
// user (ExecRequest.User must match Spec.User), a Workspace is copied in
// (not shared), and bind mounts and named volumes are refused.
//
// Nodes pull images from their registries as pods start. A pod goes to a
// node that already holds its image (the nodes' status, and the pulls the
// backend saw finish) when one has room; otherwise it claims one node,
// which pulls the image while no other pod of that image is sent there, so
// no node pulls one image twice at once; [Backend.WarmImage] (through
// sandbox.Client.WarmImage) pulls an image ahead of need with a short-lived
// pod. [WithImageAffinity] turns this off. A failed pull is a
// *sandbox.ImageError with the registry's answer.
//
// A pod the cluster loses (evicted, preempted, deleted by someone else, its
// node gone or silent past [WithNodeGrace]) ends the command with a
// *sandbox.LostError (sandbox.ErrSandboxLost), never as the command's result.
package kube
