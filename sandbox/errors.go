package sandbox

import (
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Sentinel errors. Typed errors below match them with errors.Is.
var (
	// ErrEngineUnreachable: the engine (a Docker engine, a Kubernetes API
	// server) does not answer at the client's host. Every backend's errors
	// match it when that is why they failed.
	ErrEngineUnreachable = seam.ErrUnreachable
	// ErrImageNotFound: the image is neither local nor pullable.
	ErrImageNotFound = errors.New("image not found")
	// ErrCommandNotAllowed: the sandbox's command policy refused a command.
	ErrCommandNotAllowed = errors.New("command not allowed")
	// ErrClosed: the sandbox was removed.
	ErrClosed = errors.New("sandbox closed")
	// ErrInvalidSpec: a Spec or request field has a bad value.
	ErrInvalidSpec = errors.New("invalid spec")
	// ErrUnusable: a timed-out command left processes that could not be
	// killed, so the sandbox no longer accepts commands. Remove it.
	ErrUnusable = errors.New("sandbox unusable")
	// ErrUnsafePath: a copy met an absolute path, a ".." component or a
	// symlink that leaves the destination.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrCopyLimit: a copy exceeded its byte cap.
	ErrCopyLimit = errors.New("copy limit exceeded")
	// ErrNotRunning: the sandbox's container has stopped (its main process
	// ended, or something stopped or killed it), so a command could not
	// start. Create a new sandbox.
	ErrNotRunning = errors.New("sandbox container not running")
	// ErrNotSupported: the client's backend cannot do this, e.g. manage
	// images on a Kubernetes cluster, whose nodes pull them.
	ErrNotSupported = errors.New("not supported by this backend")
	// ErrRateLimited: a registry refused a pull for its rate limit (HTTP
	// 429, "toomanyrequests"). It is transient: pulling again later may
	// work. An *ImageError whose pull hit the limit matches it.
	ErrRateLimited = errors.New("registry rate limit")
	// ErrSandboxLost: the engine lost the sandbox through no fault of what
	// ran in it (a Kubernetes pod evicted, preempted, deleted by someone
	// else, or its node stopped answering). A new sandbox may do the work.
	ErrSandboxLost = errors.New("sandbox lost")
)

// LostError reports a sandbox that the engine lost. It matches
// ErrSandboxLost and ErrNotRunning.
type LostError struct {
	Sandbox string // the sandbox's id (a pod's name)
	Node    string // "" when the sandbox had no node yet
	// Reason is one of: "Evicted", "Deleted", "NodeNotReady",
	// "NodeUnreachable", "NodeGone", "KubeletUnreachable", or the reason
	// of a pod's DisruptionTarget condition ("PreemptionByScheduler",
	// "EvictionByEvictionAPI", "DeletionByTaintManager", ...) or of its
	// failure ("Preempting", "Terminated", ...).
	Reason string
	Detail string
}

func (e *LostError) Error() string {
	msg := "sandbox " + e.Sandbox
	if e.Node != "" {
		msg += " on node " + e.Node
	}
	return fmt.Sprintf("%s lost: %s: %s", msg, e.Reason, e.Detail)
}

func (e *LostError) Unwrap() []error { return []error{ErrSandboxLost, ErrNotRunning} }

// EngineError reports that the engine (the Docker daemon, or a cluster's API
// server) could not be reached. Its message states what failed; advice on
// starting an engine belongs to the programs that print it.
type EngineError struct {
	Host string // the address tried
	Op   string // what the client was doing
	Err  error
}

func (e *EngineError) Error() string {
	host := e.Host
	if host == "" {
		host = "the default socket"
	}
	return fmt.Sprintf("%s: cannot reach the engine at %s: %v", e.Op, host, e.Err)
}

func (e *EngineError) Unwrap() []error { return []error{ErrEngineUnreachable, e.Err} }

// ImageError reports an image that is not local and could not be pulled.
type ImageError struct {
	Image   string
	PullErr error // why the pull failed; nil when pulling was disabled
}

func (e *ImageError) Error() string {
	if e.PullErr == nil {
		return fmt.Sprintf("image %q is not present on the engine and pulling is disabled", e.Image)
	}
	if errors.Is(e.PullErr, ErrRateLimited) {
		return fmt.Sprintf("image %q is not present on the engine and the registry refused the pull for its rate limit: %v", e.Image, e.PullErr)
	}
	return fmt.Sprintf("image %q is not present on the engine and pulling it failed: %v", e.Image, e.PullErr)
}

func (e *ImageError) Unwrap() []error { return []error{ErrImageNotFound, e.PullErr} }

// CommandError reports a command the policy does not admit.
type CommandError struct {
	Command string   // base name checked
	Allowed []string // what the policy admits
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("command %q is not allowed by the sandbox policy (allowed: %v); Spec.Policy chooses what runs, "+
		"e.g. sandbox.AllowCommands(%q, ...) or sandbox.AllowAll()", e.Command, e.Allowed, e.Command)
}

func (e *CommandError) Unwrap() error { return ErrCommandNotAllowed }

// SpecError names the field of a Spec or request that is invalid.
type SpecError struct {
	Field  string
	Reason string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("invalid spec: %s: %s", e.Field, e.Reason)
}

func (e *SpecError) Unwrap() error { return ErrInvalidSpec }

// PathError reports a path a copy refused.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("refused path %q: %s", e.Path, e.Reason) }

func (e *PathError) Unwrap() error { return ErrUnsafePath }

func isDialError(err error) bool { return seam.IsDialError(err) }
