package sandbox

import (
	"context"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"io"
	"time"
)

// backend is the seam between the package's engine-neutral logic and the
// engine that runs sandboxes: the Docker Engine API (docker.go), or a
// Backend from a subpackage (sandbox/kube, a Pod per sandbox) through
// seamBackend. It holds only what the package calls, in the seam's types, so
// that no engine's wire types reach the package's API.
//
// Above the seam, and shared by every backend: Spec validation and defaults,
// the command policy, output capping, timeouts and the kill of a timed-out
// command's whole process tree (a script run through exec), ErrNotRunning
// detection, the path checks and byte caps of copies, teardown on a context
// of its own, and Run's always-remove. Below it: translating a Spec into the
// engine's objects and moving bytes.
//
// Errors a backend returns are classified with [classified] so that the
// logic above can branch on errNotFound, errConflict and errUnreachable
// without knowing the engine.
type backend interface {
	// host is the address the backend talks to, e.g.
	// unix:///var/run/docker.sock.
	host() string
	// ping checks that the engine answers.
	ping(ctx context.Context) error
	// runtimes lists the runtimes a Spec.Runtime may name.
	runtimes(ctx context.Context) ([]string, error)

	// create makes, without starting it, a sandbox from a defaulted, valid
	// spec and returns its id. A missing image is errNotFound.
	create(ctx context.Context, req createRequest) (string, error)
	// start starts a created sandbox's main process, detached.
	start(ctx context.Context, id string) error
	// startAttached starts a created sandbox's main process with its
	// standard streams wired to s (stdin only when the sandbox was created
	// with createRequest.stdin) and reports its exit.
	startAttached(ctx context.Context, id string, s stdio) (*mainProcess, error)
	// exec runs a command in a running sandbox and returns when its output
	// has ended, or when ctx ends (then promptly, with what it knows: the
	// command may still be running). A sandbox that is gone or stopped may
	// show as any error, or as an execStatus with noProcess; the caller
	// checks inspect to tell.
	exec(ctx context.Context, id string, req execCall) (execStatus, error)
	// inspect reports the sandbox's main process. A removed sandbox is
	// errNotFound.
	inspect(ctx context.Context, id string) (State, error)
	// logs writes the main process's output so far; tail is "all" or a
	// number of lines, "" meaning all.
	logs(ctx context.Context, id, tail string, stdout, stderr io.Writer) error
	// stop asks the main process to end, then kills it after grace.
	stop(ctx context.Context, id string, grace time.Duration) error
	// kill sends a signal ("KILL", "TERM") to the main process.
	kill(ctx context.Context, id, signal string) error
	// remove kills and removes a sandbox with the storage only it used.
	// A sandbox already gone is errNotFound; one being removed errConflict.
	remove(ctx context.Context, id string) error
	// list returns the objects that carry every one of labels; an empty
	// value matches any value of its key.
	list(ctx context.Context, labels map[string]string) ([]Object, error)
	// removeObject removes one object list returned; gone is errNotFound.
	removeObject(ctx context.Context, o Object) error
	// close releases the backend's connections.
	close() error
}

// archiver is implemented by backends with an archive endpoint that reads
// and writes a sandbox's filesystem directly. Without it, and for paths the
// endpoint does not see, copies run tar in the sandbox through exec.
type archiver interface {
	// copyIn extracts a tar stream into the directory dir.
	copyIn(ctx context.Context, id, dir string, tar io.Reader) error
	// copyOut returns src (a file or directory) as a tar stream.
	copyOut(ctx context.Context, id, src string) (io.ReadCloser, error)
}

// imageBackend is implemented by backends that manage images themselves
// (the Docker engine). Others, a Kubernetes cluster whose nodes pull, make
// the Client's image methods return ErrNotSupported.
type imageBackend interface {
	// inspectImage describes a local image; a missing one is errNotFound.
	inspectImage(ctx context.Context, ref string) (ImageInfo, error)
	pullImage(ctx context.Context, ref string) error
	buildImage(ctx context.Context, req BuildRequest, labels map[string]string) (string, error)
	importImage(ctx context.Context, req ImportRequest, labels map[string]string) error
	// removeImage removes an image; a missing one is errNotFound.
	removeImage(ctx context.Context, ref string) error
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

// State is the state of a sandbox's main process.
type State struct {
	Running   bool
	ExitCode  int  // of the main process once it has ended
	OOMKilled bool // the kernel's OOM killer ended the main process
}

// ObjectKind names the kinds of objects a backend creates for sandboxes.
type ObjectKind string

// Kinds of objects.
const (
	KindSandbox ObjectKind = "sandbox" // a Docker container, a Pod
	KindVolume  ObjectKind = "volume"  // storage made for a sandbox
	KindNetwork ObjectKind = "network" // a network, a NetworkPolicy
)

// Object is something the package created on the engine, found by its labels.
type Object struct {
	Kind   ObjectKind
	ID     string
	Name   string
	Labels map[string]string
}

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
