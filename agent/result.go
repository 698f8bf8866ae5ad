package agent

import (
	"time"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/traceback"
	"github.com/swebox/swebox/sandbox"
)

// Kind says how a run ended.
type Kind int

// The ways a run ends.
const (
	// KindOK: the program exited 0.
	KindOK Kind = iota
	// KindException: a Python exception ended it; Result.Error has the
	// traceback.
	KindException
	// KindExit: it exited non-zero without a Python traceback.
	KindExit
	// KindSignal: a signal ended it (not the timeout, not the OOM killer).
	KindSignal
	// KindTimeout: it ran past its timeout and was killed.
	KindTimeout
	// KindOOM: the kernel's OOM killer ended it at the memory limit.
	KindOOM
	// KindInstall: its requirements failed to install, so it never ran;
	// Result.Install has pip's output.
	KindInstall
)

var kindNames = [...]string{"ok", "exception", "exit", "signal", "timeout", "oom", "install"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "unknown"
	}
	return kindNames[k]
}

// MarshalText encodes k by its String name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Result is what a run did. Secrets are masked in every text it holds.
type Result struct {
	Kind     Kind
	ExitCode int
	Signal   int // the signal that ended the program, 0 when it exited
	Stdout   sandbox.Output
	Stderr   sandbox.Output
	// Error is the last Python traceback on stderr, when there is one
	// (also when the program then exited 0).
	Error *traceback.Exception
	// PeakMemory is the peak resident memory of the program's largest
	// process, in bytes (getrusage's ru_maxrss of the launcher's children);
	// 0 when unknown: the image has no python3 or the run timed out.
	PeakMemory int64
	// MemoryLimit is the sandbox's memory limit in bytes.
	MemoryLimit int64
	// CPUTime is user plus system time of the program's processes.
	CPUTime  time.Duration
	Duration time.Duration
	// Timeout is the timeout the run had.
	Timeout time.Duration
	// Artifacts are the files under output/ (in a session: those this run
	// created or changed), in path order, capped by ArtifactOptions.
	Artifacts []Artifact
	// ArtifactsDropped counts files past ArtifactOptions.MaxFiles.
	ArtifactsDropped int
	// ArtifactsSkipped counts entries under output/ that are not regular
	// files (symlinks among them, never followed).
	ArtifactsSkipped int
	// Egress lists the requests the egress proxy saw during the run,
	// refused ones with the reason, up to egress.DefaultMaxEvents.
	Egress []egress.Event
	// EgressDropped counts the requests past that cap.
	EgressDropped int
	// Install describes the requirements install, when there was one.
	Install *Install
}

// OK reports whether the program exited 0.
func (r Result) OK() bool { return r.Kind == KindOK }

// Artifact is a file the program wrote under output/.
type Artifact struct {
	Name string // base name
	Path string // slash-separated path relative to output/
	Size int64
	MIME string
	// Data is the content; nil when the run's byte cap was reached before
	// this file.
	Data []byte
}

// kindOf classifies a finished command.
func kindOf(res sandbox.ExecResult, perr *traceback.Exception) Kind {
	switch {
	case res.TimedOut:
		return KindTimeout
	case res.OOMKilled:
		return KindOOM
	case res.ExitCode == 0:
		return KindOK
	case perr != nil:
		return KindException
	case res.Signal != 0:
		return KindSignal
	default:
		return KindExit
	}
}
