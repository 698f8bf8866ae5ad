package swebench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// Outcome is what became of one submitted instance: the verdict, or the one
// reason there is none. Exactly one applies to each instance.
type Outcome string

// Outcomes. Resolved and unresolved are the official verdicts; the others
// say why an instance has none, or (out of memory) why it failed.
const (
	OutcomeResolved   Outcome = "resolved"
	OutcomeUnresolved Outcome = "unresolved"
	// OutcomeOutOfMemory: graded unresolved while the OOM killer ended
	// processes of the tests.
	OutcomeOutOfMemory Outcome = "out_of_memory"
	OutcomeEmptyPatch  Outcome = "empty_patch"
	// OutcomePatchFailed: no patch command applied the model patch.
	OutcomePatchFailed Outcome = "patch_failed"
	// OutcomeTimedOut: the eval script ran past the timeout.
	OutcomeTimedOut Outcome = "timed_out"
	// OutcomeImageMissing: no image for the instance, or the image is not
	// on the engine and pulling is off.
	OutcomeImageMissing Outcome = "image_missing"
	// OutcomeImagePullFailed: the image is not on the engine and pulling it
	// failed. When a registry's rate limit was the cause, after the retries
	// of Config.PullRetries, the result's Err matches
	// sandbox.ErrRateLimited and is a *PullRetryError.
	OutcomeImagePullFailed Outcome = "image_pull_failed"
	// OutcomeImageBuildFailed: building the instance's image (Config.
	// BuildImages) failed; the result's Err is an *imagebuild.BuildError
	// naming the build log.
	OutcomeImageBuildFailed Outcome = "image_build_failed"
	// OutcomeEngineLost: the engine stopped answering.
	OutcomeEngineLost Outcome = "engine_lost"
	// OutcomeSandboxLost: the cluster lost the instance's sandbox (pod
	// evicted, preempted, deleted, its node gone) on every attempt that
	// Config.LostRetries allows.
	OutcomeSandboxLost Outcome = "sandbox_lost"
	// OutcomeDiskLimit: the sandbox wrote more to its writable root
	// filesystem (prebuilt mode) than Config.Limits.Disk allows and was
	// killed: the official harness sets no such bound, so the instance
	// cannot be graded as it would be; a rerun with a larger limit may.
	OutcomeDiskLimit Outcome = "disk_limit"
	// OutcomeInstallFailed: the eval script's install step failed in the
	// sandbox, which has no network where the official harness's
	// container has (see InstallError); the instance is not graded.
	OutcomeInstallFailed Outcome = "install_failed"
	// OutcomeNeedsNetwork: a family whose harness runs the tests with the
	// network (Multi-SWE-bench, SWE-bench Pro, SWE-PolyBench, SWE-smith)
	// would have the instance graded not resolved, and its log shows that
	// the tests tried the network, which the sandbox does not have (see
	// NeedsNetworkError); the instance is not graded.
	OutcomeNeedsNetwork Outcome = "needs_network"
	// OutcomeCancelled: the run's context ended before the instance did
	// (Ctrl-C), or before it started.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeError: any other failure, e.g. a bad test spec, or a log on
	// which the official parser raises.
	OutcomeError Outcome = "error"
)

// Infrastructure reports whether the outcome says nothing about the model:
// the instance could not be evaluated for reasons of the machine, and a
// rerun may give it a verdict.
func (o Outcome) Infrastructure() bool {
	switch o {
	case OutcomeImageMissing, OutcomeImagePullFailed, OutcomeImageBuildFailed, OutcomeEngineLost, OutcomeSandboxLost, OutcomeDiskLimit, OutcomeInstallFailed, OutcomeNeedsNetwork, OutcomeCancelled:
		return true
	}
	return false
}

// outcomeOf classifies a result.
func outcomeOf(r *InstanceResult) Outcome {
	switch r.Status {
	case StatusResolved:
		return OutcomeResolved
	case StatusUnresolved:
		if r.OOMKills > 0 {
			return OutcomeOutOfMemory
		}
		return OutcomeUnresolved
	case StatusEmptyPatch:
		return OutcomeEmptyPatch
	}
	var img *sandbox.ImageError
	switch err := r.Err; {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	case errors.Is(err, sandbox.ErrEngineUnreachable):
		return OutcomeEngineLost
	case errors.Is(err, sandbox.ErrSandboxLost):
		return OutcomeSandboxLost
	case errors.Is(err, sandbox.ErrDiskLimit):
		return OutcomeDiskLimit
	case errors.Is(err, ErrInstallFailed):
		return OutcomeInstallFailed
	case errors.Is(err, ErrNeedsNetwork):
		return OutcomeNeedsNetwork
	case errors.Is(err, ErrPatchApply):
		return OutcomePatchFailed
	case errors.Is(err, ErrTestTimeout):
		return OutcomeTimedOut
	case errors.Is(err, imagebuild.ErrImageBuildFailed):
		return OutcomeImageBuildFailed
	case errors.Is(err, ErrNoImage):
		return OutcomeImageMissing
	case errors.As(err, &img):
		if img.PullErr != nil {
			return OutcomeImagePullFailed
		}
		return OutcomeImageMissing
	case errors.Is(err, sandbox.ErrImageNotFound):
		// The node running the sandbox lacks the image (Kubernetes).
		return OutcomeImageMissing
	}
	return OutcomeError
}

// oomLine begins the run_instance.log line that records OOM kills.
const oomLine = "Out of memory: the OOM killer ended"

// oomLogged reports whether an instance's run_instance.log records OOM
// kills (for instances finished by an earlier run).
func oomLogged(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "run_instance.log"))
	return err == nil && strings.Contains(string(b), oomLine)
}

// final reports whether a rerun keeps the outcome rather than evaluating
// the instance again (without Config.RetryFailures): the failures of the
// prediction itself, which a rerun would only repeat. Verdicts are kept
// through report.json.
func (o Outcome) final() bool { return o == OutcomePatchFailed || o == OutcomeTimedOut }

// outcomeFile records, beside the official files, the outcome of an
// instance that ended without a report.json but with a final outcome.
const outcomeFile = "swebox_outcome.json"

type outcomeRecord struct {
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error"`
}

// recordOutcome writes outcomeFile when r's outcome is final.
func recordOutcome(dir string, r *InstanceResult) error {
	if !r.Outcome.final() {
		return nil
	}
	b, err := json.Marshal(outcomeRecord{Outcome: r.Outcome, Error: r.Error})
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, outcomeFile), append(b, '\n'))
}

// recordedOutcome reads outcomeFile; ok is false when there is none or it
// is unreadable.
func recordedOutcome(dir string) (rec outcomeRecord, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, outcomeFile))
	if err != nil || json.Unmarshal(b, &rec) != nil || !rec.Outcome.final() {
		return outcomeRecord{}, false
	}
	return rec, true
}

// EarlierRunError is the failure an earlier run recorded for an instance
// that a rerun reports without evaluating it again. It matches the
// sentinel of its outcome (ErrPatchApply, ErrTestTimeout).
type EarlierRunError struct {
	Outcome Outcome
	Message string // the earlier error's text
}

func (e *EarlierRunError) Error() string { return e.Message + " (in an earlier run)" }

func (e *EarlierRunError) Unwrap() error {
	switch e.Outcome {
	case OutcomePatchFailed:
		return ErrPatchApply
	case OutcomeTimedOut:
		return ErrTestTimeout
	}
	return nil
}
