// Package seam is the contract between package sandbox and the backends that
// live in its own subpackages (sandbox/kube). It is internal so that only
// this module can implement a backend: the methods of [Backend] name this
// package's types, which no outside package can write.
//
// Above the seam, in package sandbox: Spec validation and defaults, the
// command policy, output capping, timeouts and the kill of a timed-out
// command's process tree, ErrNotRunning detection, the path checks and byte
// caps of copies, teardown on a context of its own. Below it: translating a
// Spec into the engine's objects and moving bytes. Every backend implements
// [Backend], package sandbox's Docker backend as well as a subpackage's;
// what differs between engines is an [Info] ([Describer]) and optional
// interfaces.
package seam

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"
)

// Backend runs sandboxes on one engine. S is sandbox.Spec; it is a type
// parameter only because package sandbox imports this one.
//
// Errors are classified with [Classified] so that the logic above can
// branch on ErrNotFound, ErrConflict and ErrUnreachable without knowing the
// engine.
type Backend[S any] interface {
	// Bind hands the backend what package sandbox lends it; it is called
	// once, before any other method.
	Bind(env Env[S])
	// Host is the address the backend talks to.
	Host() string
	// Ping checks that the engine answers.
	Ping(ctx context.Context) error
	// Runtimes lists the runtimes a Spec.Runtime may name.
	Runtimes(ctx context.Context) ([]string, error)
	// Create makes a sandbox from a defaulted, valid spec and returns its
	// id. A missing image is ErrNotFound.
	Create(ctx context.Context, req CreateRequest[S]) (string, error)
	// Start starts a created sandbox's main process, detached.
	Start(ctx context.Context, id string) error
	// StartAttached starts a created sandbox's main process with its
	// standard streams wired to s and reports its exit.
	StartAttached(ctx context.Context, id string, s Stdio) (*MainProcess, error)
	// Exec runs a command in a running sandbox and returns when its output
	// has ended, or promptly when ctx ends (Running then says the command
	// may still run).
	Exec(ctx context.Context, id string, call ExecCall) (ExecStatus, error)
	// Inspect reports the sandbox's main process; a removed sandbox is
	// ErrNotFound.
	Inspect(ctx context.Context, id string) (State, error)
	// Logs writes the main process's output so far; tail is "all" or a
	// number of lines, "" meaning all.
	Logs(ctx context.Context, id, tail string, stdout, stderr io.Writer) error
	// Stop asks the main process to end, then kills it after grace.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Kill sends a signal ("KILL", "TERM") to the main process.
	Kill(ctx context.Context, id, signal string) error
	// Remove kills and removes a sandbox; gone is ErrNotFound.
	Remove(ctx context.Context, id string) error
	// List returns the objects that carry every one of labels; an empty
	// value matches any value of its key.
	List(ctx context.Context, labels map[string]string) ([]Object, error)
	// RemoveObject removes one object List returned; gone is ErrNotFound.
	RemoveObject(ctx context.Context, o Object) error
	// Close releases the backend's connections.
	Close() error
}

// Env is what package sandbox lends a backend.
type Env[S any] struct {
	// Log is the client's logger.
	Log *slog.Logger
	// Defaults returns s with the package's defaults filled in.
	Defaults func(s S) S
	// TarWorkspace writes the host directory dir as a tar stream with the
	// path checks and byte cap of a copy into a sandbox, its files owned
	// by uid:gid.
	TarWorkspace func(dir string, uid, gid int, w io.Writer) error
}

// CreateRequest is a sandbox to create.
type CreateRequest[S any] struct {
	Spec   S                 // defaulted and valid
	Cmd    []string          // the main process; no entrypoint runs before it
	Labels map[string]string // put on the sandbox and everything made for it
	Stdin  bool              // keep the main process's stdin open for StartAttached
	// Leased: the sandbox lives no longer than its lease (package
	// sandbox's leaser); the engine removes it, with the storage made for
	// it, once its main process ends. Backends without leases ignore it.
	Leased bool
}

// Stdio is where a process's standard streams go. Stdin may be nil; Stdout
// and Stderr are never nil.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ExecCall is one command to run in a sandbox.
type ExecCall struct {
	Cmd        []string
	Env        []string // KEY=VALUE, added to the sandbox's
	User       string   // uid:gid; never empty
	WorkingDir string   // "" keeps the sandbox's
	Stdio
}

// ExecStatus is what the backend learnt about a command once its output
// ended.
type ExecStatus struct {
	ExitCode int
	// Running: the command still runs (its output ended early, or ctx
	// ended first).
	Running bool
	// NoProcess: the command ended without a process ever having run.
	NoProcess bool
}

// MainProcess is a sandbox's main process started by StartAttached.
type MainProcess struct {
	// Exited delivers the exit once the process has ended and its output
	// has been copied.
	Exited <-chan MainExit
	// Release closes the streams; safe to call at any time.
	Release func()
}

// MainExit is how a main process ended.
type MainExit struct {
	Code int
	Err  error
}

// State is the state of a sandbox's main process.
type State struct {
	Running   bool
	ExitCode  int
	OOMKilled bool
}

// ObjectKind names the kinds of objects a backend creates for sandboxes.
type ObjectKind string

// Kinds of objects.
const (
	KindSandbox ObjectKind = "sandbox" // a Docker container, a Pod
	KindVolume  ObjectKind = "volume"  // storage made for a sandbox
	KindNetwork ObjectKind = "network" // a network, a NetworkPolicy
)

// Object is something a backend created, found by its labels.
type Object struct {
	Kind   ObjectKind
	ID     string
	Name   string
	Labels map[string]string
}

// Info is what a backend says of its engine beyond Backend's methods. A
// Backend that does not implement Describer has the zero Info. What else a
// backend offers is an optional interface of package sandbox that it
// implements: images, an archive endpoint for copies, leases that tie a
// sandbox to its owner process, the exec agent over its own transport
// (AgentStarter), image warming (ImageWarmer).
type Info struct {
	// SharesHostFiles: sandboxes run on this machine, and a bind mount of
	// one of its paths (Spec.Workspace, Mount) shows them the host's files
	// (a local Docker engine), rather than a copy having to be made.
	SharesHostFiles bool
	// AgentSocket: the exec agent can run in a sandbox from a bind-mounted
	// host binary and be reached over a Unix socket in a bind-mounted host
	// directory (a local engine running runc).
	AgentSocket bool
	// SandboxUserIsCaller: the sandbox's user is, on the host, the user
	// this process runs as (rootless Podman maps it so), so that what this
	// process makes for the sandbox needs no chown.
	SandboxUserIsCaller bool
	// ArchiveFollowsLinks: the engine's archive endpoint resolves symbolic
	// links in the paths it copies (Podman 4.3, in a bind mount), so copies
	// run tar in the sandbox through exec instead, where a link reaches
	// nothing of the host's.
	ArchiveFollowsLinks bool
	// SharedMemoryCgroup: the memory cgroup a sandbox sees is not its own
	// but the engine's, shared with the engine's other sandboxes and the
	// processes of the user that runs it (rootless Podman without the
	// memory controller: on cgroup v1 the container stays in the
	// service's cgroup), so its OOM kill counter tells nothing of the
	// sandbox.
	SharedMemoryCgroup bool
}

// Describer is implemented by a Backend that reports an Info.
type Describer interface {
	Info() Info
}

// Classes of backend errors.
var (
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrUnreachable = errors.New("engine unreachable")
)

// classifiedError gives a backend error a class while keeping its message
// and chain.
type classifiedError struct {
	class error
	err   error
}

func (e *classifiedError) Error() string   { return e.err.Error() }
func (e *classifiedError) Unwrap() []error { return []error{e.class, e.err} }

// Classified marks err with class; a nil err stays nil.
func Classified(class, err error) error {
	if err == nil {
		return nil
	}
	return &classifiedError{class: class, err: err}
}

// AgentStarter is implemented by a Backend that can run the exec agent
// (package execagent) in its sandboxes. The logic above the seam then sends
// a started sandbox's commands through the agent, as it does on Docker, and
// through Exec when StartAgent fails or the agent goes.
type AgentStarter interface {
	// StartAgent starts the agent in the running sandbox id, before any
	// command of the caller runs there, and returns the way to reach it.
	StartAgent(ctx context.Context, id string) (Agent, error)
}

// Agent is a sandbox's running exec agent, seen from the host.
type Agent interface {
	// Dial opens a connection for one command, authenticated if the agent
	// needs it; execagent.Run speaks the protocol on it. An error means
	// the agent cannot be reached (ErrAgentGone when it has ended).
	Dial(ctx context.Context) (net.Conn, error)
	// Explain is asked when a command on conn ended with err (the
	// connection broke) or, with a nil err, was ended by a signal (exit
	// code): it returns the error to report instead of the command's
	// outcome when the sandbox was lost meanwhile (a *sandbox.LostError),
	// ErrAgentGone when the agent ended before it took the command, and
	// nil otherwise.
	Explain(ctx context.Context, conn net.Conn, code int, err error) error
	// Close ends the host's connections to the agent.
	Close() error
}

// ErrAgentGone: a sandbox's exec agent has ended; its commands go through
// Exec.
var ErrAgentGone = errors.New("exec agent ended")
