package swebench

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/repo"
)

// Defaults of a Config.
const (
	DefaultMaxWorkers      = 4
	DefaultTimeout         = 1800 * time.Second
	DefaultLogDir          = "logs"
	DefaultImage           = sandbox.ProjectImage
	DefaultTestOutputLimit = 64 << 20
	DefaultPullRetries     = 4
	DefaultStartAhead      = 2
	DefaultPullBackoff     = 30 * time.Second
	DefaultLostRetries     = 2
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
	// DatasetName and Split are recorded in
	// <log_dir>/run_evaluation/<run_id>/run.json, which v5 rules write as
	// 5.0.2 does (v4.1.0 writes none). Default "" and "".
	DatasetName string
	Split       string
	// TaskRepo is the task repository the rows came from, recorded as
	// run.json's task_repo (5.0.2's --task-repo). Default "": null, or
	// what an earlier run.json of the run recorded.
	TaskRepo string
	// Rules picks v4 or v5 grading and patch fallbacks. Default
	// harness.V5.
	Rules harness.Rules
	// GradingMode is GradingOfficial (the default: the official rules,
	// hole for hole) or GradingStrict: the verdicts the official rules
	// give, minus every one a strict rule refuses, each with its reason in
	// report.json and the run report (see package strict).
	GradingMode GradingMode
	// Mode picks how the repository reaches the container, for every
	// instance. Default: the mode the other fields ask for (see
	// [Config.Validate]); when none does, each instance runs as its
	// family's harness would run it: in its prebuilt image (the row's
	// image, else the family's name for it, e.g.
	// <Namespace>/sweb.eval.x86_64.<id>:<ImageTag>, pulled if missing)
	// when a task family claims it ([family.Resolve]: the harness tables
	// know its repository, or its fields or the dataset's name say whose
	// it is); in workspace mode when the row names its log parser or
	// SpecOverrides is given; any other row is refused
	// ([UnclaimedError]). Your own repositories and the demo run in
	// workspace mode when asked for (Mode, Repos, Image, ImageMap).
	//
	// Workspace mode grades an official repository only in an image the
	// image map names for it: the default image lacks its dependencies, so
	// the run is refused before anything runs ([WorkspaceImageError]).
	Mode harness.Mode
	// Family names the task family of every row (see package family, e.g.
	// "swe-gym"), for rows that do not say it themselves. Default: each
	// row's own family, from the dataset's name (DatasetName) or the row
	// ([family.Resolve]). A row no family claims runs only where the run
	// gives it an environment (workspace mode, SpecOverrides); any other
	// is refused before anything runs ([UnclaimedError]).
	Family string
	// Gold makes the predictions from the dataset's own patches, as the
	// official "gold" predictions path does: from every row of Dataset
	// under v4 rules (v4.1.0 reads the whole split), from the selection
	// (InstanceIDs) under v5. Predictions must then be empty.
	Gold bool
	// Shard runs one slice of the selection (see [Shard]); the zero value
	// runs all of it.
	Shard Shard

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
	// RetryFailures makes a rerun evaluate again the instances whose
	// earlier attempt in this run failed for reasons of the prediction
	// (OutcomePatchFailed, OutcomeTimedOut), as the official harness does.
	// By default a rerun retries only the instances without a verdict for
	// other reasons (infrastructure failures, cancellation, errors) and
	// reports the others with their recorded outcome.
	RetryFailures bool
	// Repeat evaluates each instance this many times to find flaky tests
	// and verdicts: the first run writes the official files and the run
	// report, later runs write theirs under <instance dir>/swebox_repeat/<k>/,
	// and flaky.json in the run's log directory lists what changed between
	// runs (see [FlakyReport]). Each run resumes on its own. Repeat > 1
	// contradicts RewriteReports, which runs no tests. Default 1.
	Repeat int

	// Image is the workspace-mode image when ImageMap has no entry.
	// Default swebox/python:bookworm.
	Image string
	// ImageMap maps "owner/name" or "owner/name:version" to an image; the
	// more specific key wins.
	ImageMap map[string]string
	// ImageMapFile is an image map file (see spec.LoadImageMap), read once;
	// errors name its line. Give ImageMap or ImageMapFile, not both.
	ImageMapFile string
	// Namespace and ImageTag name prebuilt images:
	// <namespace>/sweb.eval.x86_64.<id>:<tag>. Defaults
	// harness.DefaultNamespace, harness.DefaultTag. NoNamespace names the
	// images the official harness builds locally,
	// sweb.eval.x86_64.<id>:<tag>.
	Namespace string
	ImageTag  string
	// BuildImages builds the instance images before the run, as the
	// official harness does with --namespace none (see ImageBuild). Nil
	// builds nothing.
	BuildImages *ImageBuild
	// ImageFailures holds, per instance id, why its image could not be
	// had by a build the caller ran before the run (eval --task_repo
	// builds a task repository's images as 5.0.2's _build_before_eval
	// does); each error should wrap imagebuild.ErrImageBuildFailed. Those
	// instances end as image_build_failed and the others run. Default
	// nil.
	ImageFailures map[string]error
	// SpecOverrides is an override file for custom datasets (see package
	// spec); optional.
	SpecOverrides string
	// ProCheckout is a checkout of scaleapi/SWE-bench_Pro-os (at
	// family.ProCommit or later): SWE-bench Pro's harness reads each
	// instance's run_scripts/<id>/run_script.sh and parser.py and the ENV
	// lines of dockerfiles/{base,instance}_dockerfile/<id>/Dockerfile
	// from it. A Pro row needs it; a run with a Pro row whose files the
	// checkout lacks is refused before anything runs, the error naming
	// the file (*family.ProFileError). Default "" (Pro rows are refused).
	ProCheckout string

	// Repos prepares repositories in workspace mode. Default: a cache with
	// RepoSources as its local sources.
	Repos *repo.Cache
	// RepoSources are directories of local repository sources for the
	// default cache (see repo.WithLocalSources); ignored when Repos is set.
	RepoSources []string
	// WorkDir holds per-instance workspaces, under <WorkDir>/<RunID>/.
	// Default: DefaultWorkDir().
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
	// spread the load over several Docker hosts. The caller closes them.
	// Default: one client from the environment, which the run closes.
	Sandboxes []*sandbox.Client
	// PullRetries is how many times a pull that a registry refused for its
	// rate limit (sandbox.ErrRateLimited) is tried again before the
	// instance ends as OutcomeImagePullFailed. Default 4; negative means
	// none.
	PullRetries int
	// PullBackoff is the wait before the first of those retries; each
	// further wait doubles. An instance waiting gives up its worker slot,
	// so the others go on meanwhile; on Kubernetes, where a node pulls as
	// the instance's pod starts, it waits in its slot. Default 30 s.
	PullBackoff time.Duration
	// LostRetries is how many times an instance whose sandbox the cluster
	// lost (sandbox.ErrSandboxLost: its pod evicted, preempted, deleted by
	// someone else, or its node gone) is evaluated again from scratch on a
	// new sandbox. Past them it ends as OutcomeSandboxLost. Each retry is
	// recorded in InstanceResult.Retries, run_instance.log and the run
	// report's swebox_retried. Default 2; negative means none.
	LostRetries int
	// PrepullWindow is how many upcoming instances have their images
	// pulled while the current ones run, on engines whose nodes pull
	// (Kubernetes; see sandbox.Client.WarmImage): when an instance takes
	// a worker slot, the images of the next PrepullWindow instances are
	// warmed, at most PrepullWindow at a time, each onto one node, where
	// the instance's pod then goes. Docker pulls each image before its
	// instance instead. Default MaxWorkers; negative means none.
	PrepullWindow int
	// StartAhead is how many upcoming instances have their sandboxes
	// created and started while the current ones run, so that a worker
	// finds its sandbox ready: when an instance takes a worker slot, the
	// sandboxes of the next StartAhead instances are started. It applies
	// where the sandbox needs no host directory of the instance's
	// (Kubernetes, CopyWorkspace, prebuilt mode); a checkout bind-mounted
	// from this machine is made by the worker. A sandbox started ahead
	// that fails or goes unused is removed and never decides an outcome:
	// the worker then creates its own. Default 2; negative means none.
	StartAhead int
	// InstanceTimeout bounds the whole evaluation of one instance (of each
	// run with Repeat), lost-sandbox retries included: a retry gets what
	// is left, not a fresh budget, so an instance whose pods the cluster
	// keeps losing cannot hold a worker for hours. Past it the instance
	// ends with an *InstanceTimeoutError, sandbox_lost when a loss used up
	// the time. Default 2×Timeout plus 10 minutes.
	InstanceTimeout time.Duration
	// Runtime is the OCI runtime of every sandbox, e.g. "runsc".
	Runtime string
	// GrantCapabilities adds to an instance's sandbox the capabilities
	// upstream adds to its container (SYS_ADMIN, for the Multimodal
	// Chart.js rows' browser tests) under any runtime; each grant is
	// written to run_instance.log. Without it they are added only inside
	// gVisor (Runtime "runsc"), whose kernel is not the host's, and
	// elsewhere the log says they were left out. Default false.
	GrantCapabilities bool
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

// GradingMode selects official or strict grading (Config.GradingMode).
type GradingMode string

const (
	GradingOfficial GradingMode = "official"
	GradingStrict   GradingMode = "strict"
)

// Valid reports whether m is a grading mode ("" is GradingOfficial).
func (m GradingMode) Valid() bool { return m == "" || m == GradingOfficial || m == GradingStrict }

// EventKind tells what an Event reports.
type EventKind string

const (
	EventStarted  EventKind = "started"
	EventFinished EventKind = "finished"
	// EventSkipped: an earlier run finished the instance (report.json), or
	// recorded a failure of the prediction that a rerun does not retry
	// (see Config.RetryFailures).
	EventSkipped EventKind = "skipped"
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
	// Error explains StatusError; it is Err.Error(), kept for JSON and
	// printing.
	Error string
	// Err is the error of StatusError, for errors.Is and errors.As: for
	// example sandbox.ErrEngineUnreachable when the engine went away,
	// sandbox.ErrImageNotFound, ErrNoImage, ErrPatchApply, ErrTestTimeout.
	Err error `json:"-"`
	// Warning flags something a person should know about a result that
	// stands, e.g. a finished instance whose prediction has changed since
	// (the official harness does not evaluate it again either, #504).
	Warning string
	// Outcome is the instance's one typed outcome.
	Outcome Outcome
	// Report is the instance's report.json, as written (or, for an
	// instance an earlier run finished, as read back); nil when the
	// instance has none (StatusError, StatusEmptyPatch).
	Report *grade.InstanceReport `json:",omitempty"`
	// Retries lists the attempts the cluster cut short by losing the
	// sandbox (see Config.LostRetries), oldest first; the result is the
	// attempt after them.
	Retries []grade.Retry `json:",omitempty"`
	// Repeats compares the runs of the instance when Config.Repeat > 1;
	// the rest of the result is run 1's.
	Repeats *Repeats `json:",omitempty"`
	// OOMKills counts processes of the tests the OOM killer ended.
	OOMKills int
	// PatchCommand is the patch attempt that worked.
	PatchCommand string
	// PatchAttempts are the patch commands run, in order, each with its
	// exit status and output (capped): the last applied the patch
	// (PatchCommand) unless the outcome is OutcomePatchFailed, where they
	// are what upstream logs after "Patch Apply Failed".
	PatchAttempts []PatchAttempt `json:",omitempty"`
	// LogTail is the end of the instance's test_output.txt, at most
	// LogTailLimit bytes, "" when the tests did not run.
	LogTail string `json:",omitempty"`
	// Duration is the instance's wall time; TestDuration the eval script's.
	Duration, TestDuration time.Duration
	// LogDir is the instance's log directory.
	LogDir string
}

// Fraction is x of y.
type Fraction struct{ Passed, Total int }

// DefaultWorkDir is where a run's workspaces go unless Config.WorkDir says
// otherwise: swebox-work under the OS temp dir.
func DefaultWorkDir() string { return filepath.Join(os.TempDir(), "swebox-work") }
