package sandbox

import (
	"context"
	"io"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Every engine, the default Docker engine (docker.go) as well as one from a
// subpackage (sandbox/kube, a Pod per sandbox), implements Backend: the
// seam between the package's engine-neutral logic and the engine that runs
// sandboxes. It holds only what the package calls, in the seam's types, so
// that no engine's wire types reach the package's API.
//
// Above the seam, and shared by every backend: Spec validation and defaults,
// the command policy, output capping, timeouts and the kill of a timed-out
// command's whole process tree (a script run through exec), ErrNotRunning
// detection, the path checks and byte caps of copies, teardown on a context
// of its own, and Run's always-remove. Below it: translating a Spec into the
// engine's objects and moving bytes.
//
// What differs between engines is a seam.Info (Describer) and the optional
// interfaces below, which the package asks for with a type assertion on the
// capability, never on a backend's type: archiver, imageBackend,
// imagePusher, leaser, seam.AgentStarter, seam.ImageWarmer.
//
// Errors a backend returns are classified with [classified] so that the
// logic above can branch on errNotFound, errConflict and errUnreachable
// without knowing the engine.

// archiver is implemented by backends with an archive endpoint that reads
// and writes a sandbox's filesystem directly. Without it, and for paths the
// endpoint does not see, copies run tar in the sandbox through exec.
type archiver interface {
	// CopyIn extracts a tar stream into the directory dir.
	CopyIn(ctx context.Context, id, dir string, tar io.Reader) error
	// CopyOut returns src (a file or directory) as a tar stream.
	CopyOut(ctx context.Context, id, src string) (io.ReadCloser, error)
}

// imageBackend is implemented by backends that manage images themselves
// (the Docker engine). Others, a Kubernetes cluster whose nodes pull, make
// the Client's image methods return ErrNotSupported.
type imageBackend interface {
	// InspectImage describes a local image; a missing one is errNotFound.
	InspectImage(ctx context.Context, ref string) (ImageInfo, error)
	PullImage(ctx context.Context, ref string) error
	BuildImage(ctx context.Context, req BuildRequest, labels map[string]string) (string, error)
	ImportImage(ctx context.Context, req ImportRequest, labels map[string]string) error
	// RemoveImage removes an image; a missing one is errNotFound.
	RemoveImage(ctx context.Context, ref string) error
}

// The types that cross the seam are the seam package's, shared with the
// backends of subpackages.
type (
	createRequest = seam.CreateRequest[Spec]
	stdio         = seam.Stdio
	execCall      = seam.ExecCall
	execStatus    = seam.ExecStatus
	mainProcess   = seam.MainProcess
	mainExit      = seam.MainExit
)

// State is the state of a sandbox's main process: Running, ExitCode (of
// the main process once it has ended), OOMKilled (the kernel's OOM killer
// ended the main process).
type State = seam.State

// ObjectKind names the kinds of objects a backend creates for sandboxes.
type ObjectKind = seam.ObjectKind

// Kinds of objects.
const (
	KindSandbox = seam.KindSandbox // a Docker container, a Pod
	KindVolume  = seam.KindVolume  // storage made for a sandbox
	KindNetwork = seam.KindNetwork // a network, a NetworkPolicy
)

// Object is something the package created on the engine, found by its
// labels: Kind, ID, Name, Labels.
type Object = seam.Object

// ImageInfo describes a local image.
type ImageInfo struct {
	// ID is the image's content-addressed id, e.g. "sha256:...".
	ID string
	// RepoDigests are the registry digests the image is known by.
	RepoDigests []string
	Labels      map[string]string
	// Cmd is the image's default command.
	Cmd []string
}

// Classes of backend errors, for the logic above the seam.
var (
	errNotFound    = seam.ErrNotFound
	errConflict    = seam.ErrConflict
	errUnreachable = seam.ErrUnreachable
)

// classified marks err with class; a nil err stays nil.
func classified(class, err error) error { return seam.Classified(class, err) }

// info is b's seam.Info, the zero one when it does not say.
func info(b Backend) seam.Info {
	if d, ok := b.(seam.Describer); ok {
		return d.Info()
	}
	return seam.Info{}
}
