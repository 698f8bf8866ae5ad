package swebench

import (
	"log/slog"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/repo"
)

// Mode says how the repository gets into the container.
type Mode string

const (
	// ModeWorkspace checks the repository out on the host at base_commit
	// (go-git) and mounts it read-write at /testbed in the chosen image.
	ModeWorkspace Mode = "workspace"
	// ModePrebuilt uses images that already hold the repository at
	// /testbed (the official sweb.eval.* images), made writable by a fresh
	// volume while the root filesystem stays read-only.
	ModePrebuilt Mode = "prebuilt"
)

// Rules selects the official harness version whose behaviour is reproduced.
type Rules string

const (
	RulesV4 Rules = "v4" // swebench 4.1.0
	RulesV5 Rules = "v5" // swebench 5.x
)

// Defaults of a Config.
const (
	DefaultMaxWorkers      = 4
	DefaultTimeout         = 1800 * time.Second
	DefaultLogDir          = "logs"
	DefaultImage           = "swebox/python:bookworm"
	DefaultNamespace       = "swebench"
	DefaultImageTag        = "latest"
	DefaultTestOutputLimit = 64 << 20
	// NoNamespace as Config.Namespace selects image names without a
	// namespace (the official --namespace none).
	NoNamespace = "none"
)

// Config is one evaluation run.
type Config struct {
	// Dataset rows; the -i filter is InstanceIDs.
	Dataset []dataset.Instance
	// Predictions to evaluate (dataset.GoldPredictions for "gold").
	Predictions []dataset.Prediction
	// InstanceIDs restricts the run; empty means every instance.
	InstanceIDs []string
	// RunID names the log directory and the run report; required.
	RunID string
	// Rules picks v4 or v5 grading and patch fallbacks. Default v5.
	Rules Rules
	// Mode picks how the repository reaches the container. Default
	// ModeWorkspace.
	Mode Mode

	// MaxWorkers bounds concurrent instances. Default 4.
	MaxWorkers int
	// Timeout bounds each instance's eval script. Default 1800 s.
	Timeout time.Duration
	// LogDir holds logs/run_evaluation/<run_id>/<model>/<id>/. Default "logs".
	LogDir string
	// ReportDir receives <model>.<run_id>.json. Default ".".
	ReportDir string
	// RewriteReports re-grades existing test_output.txt files without
	// containers.
	RewriteReports bool

	// Image is the workspace-mode image when ImageMap has no entry.
	// Default swebox/python:bookworm.
	Image string
	// ImageMap maps "owner/name" or "owner/name:version" to an image; the
	// more specific key wins.
	ImageMap map[string]string
	// Namespace and ImageTag name prebuilt images:
	// <namespace>/sweb.eval.x86_64.<id>:<tag>. Defaults swebench, latest.
	// NoNamespace names the images the official harness builds locally,
	// sweb.eval.x86_64.<id>:<tag>.
	Namespace string
	ImageTag  string
	// SpecOverrides is an override file for custom datasets (see package
	// spec); optional.
	SpecOverrides string

	// Repos prepares repositories in workspace mode. Default: a cache with
	// no local sources.
	Repos *repo.Cache
	// WorkDir holds per-instance workspaces. Default: a directory under
	// the OS temp dir.
	WorkDir string
	// KeepWorkspaces leaves workspaces on disk after grading.
	KeepWorkspaces bool
	// CopyWorkspace copies each checkout into a fresh volume at /testbed
	// (the sandbox then runs as root, as in prebuilt mode) instead of
	// bind-mounting it. Default: on for engines reached other than through
	// a local socket (tcp://...), whose containers cannot see this
	// machine's files; off otherwise.
	CopyWorkspace bool
	// ShareObjects lets each workspace's .git borrow the repository
	// source's objects (git alternates, the objects directory mounted
	// read-only) instead of carrying its own pack of the base commit's
	// objects. It saves about a tenth of a second per instance on a
	// 5,000-file repository, but the tests can then read every commit of
	// the source, later ones included, and with them the upstream fix.
	// The official images hold no commit after the base commit. Off by
	// default; ignored when the workspace is copied.
	ShareObjects bool

	// Sandboxes are the engines instances run on, round-robin; several
	// spread the load over several Docker hosts. Default: one client from
	// the environment.
	Sandboxes []*sandbox.Client
	// Runtime is the OCI runtime of every sandbox, e.g. "runsc".
	Runtime string
	// Limits of every sandbox; zero fields take the sandbox defaults.
	Limits sandbox.Limits
	// TestOutputLimit caps test_output.txt on disk; the head and the last
	// part are kept. Default 64 MiB.
	TestOutputLimit int64

	// LogDiffs runs `git diff` before and after the eval script and writes
	// it to run_instance.log, as the official harness does. Off by default:
	// eval.sh prints the same diff into test_output.txt, and each costs a
	// command in the container.
	LogDiffs bool

	// Progress receives an event per instance start and end; it is called
	// from worker goroutines, one call at a time.
	Progress func(Event)
	// Logger receives the run's log. Default: discard.
	Logger *slog.Logger
}

// EventKind tells what an Event reports.
type EventKind string

const (
	EventStarted  EventKind = "started"
	EventFinished EventKind = "finished"
	EventSkipped  EventKind = "skipped" // a report.json from an earlier run exists
)

// Status is the outcome of one instance.
type Status string

const (
	StatusResolved   Status = "resolved"
	StatusUnresolved Status = "unresolved"
	StatusError      Status = "error"
	StatusEmptyPatch Status = "empty_patch"
)

// Event reports the progress of a run.
type Event struct {
	Kind       EventKind
	InstanceID string
	// Result is set on EventFinished and EventSkipped.
	Result *InstanceResult
	// Done and Total count instances of this run (skipped ones included).
	Done, Total int
}

// InstanceResult is what happened to one instance.
type InstanceResult struct {
	InstanceID string
	Status     Status
	// FailToPass and PassToPass count successes out of totals.
	FailToPass, PassToPass Fraction
	// Error explains StatusError.
	Error string
	// Warning flags something a person should know about a result that
	// stands, e.g. a finished instance whose prediction has changed since
	// (the official harness does not evaluate it again either, #504).
	Warning string
	// PatchCommand is the patch attempt that worked.
	PatchCommand string
	// Duration is the instance's wall time; TestDuration the eval script's.
	Duration, TestDuration time.Duration
	// LogDir is the instance's log directory.
	LogDir string
}

// Fraction is x of y.
type Fraction struct{ Passed, Total int }
