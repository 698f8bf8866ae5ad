package swebench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/swebox/swebox/swebench/harness"
)

// Sentinel errors. The typed errors below match them with errors.Is.
var (
	// ErrNoImage: workspace mode found no image for an instance's
	// repository and version (no Image, no ImageMap entry, no override).
	ErrNoImage = errors.New("no image for the instance")
	// ErrImagesMissing: images the run needs are not on an engine and
	// could not be pulled.
	ErrImagesMissing = errors.New("images missing")
	// ErrEngineLost: an engine stopped answering during the run, so the
	// instances it was to evaluate ended as errors that are not verdicts.
	ErrEngineLost = errors.New("engine lost during the run")
	// ErrPatchApply: every patch attempt failed (official "Patch Apply
	// Failed"); run_instance.log holds their output.
	ErrPatchApply = errors.New("patch apply failed")
	// ErrTestTimeout: the eval script ran past Config.Timeout.
	ErrTestTimeout = errors.New("tests timed out")
	// ErrConfig: a configuration (Config, GradeRequest) that cannot be
	// run; the *ConfigError says which field and why.
	ErrConfig = errors.New("invalid configuration")
)

// ConfigError is a configuration field with a value that cannot be used, or
// that contradicts another field (Conflict names it). Reason says why in
// words; commands map Field and Conflict to their flags.
type ConfigError struct {
	Field    string // e.g. "Namespace"
	Value    string // the value given, as text; "" when the field's presence is the problem
	Conflict string // the other field, when two fields contradict each other
	Reason   string
	Err      error // the underlying error, when a check returned one (e.g. dataset.ErrUnsafeName)
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.Field)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	if e.Conflict != "" {
		fmt.Fprintf(&b, " conflicts with %s", e.Conflict)
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

func (e *ConfigError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConfig, e.Err}
	}
	return []error{ErrConfig}
}

// NoImageError names the repository and version that have no image.
type NoImageError struct {
	Repo, Version string
}

func (e *NoImageError) Error() string {
	return fmt.Sprintf("no image for %s version %s", e.Repo, e.Version)
}

func (e *NoImageError) Unwrap() error { return ErrNoImage }

// MissingImagesError lists the images a run needs that are not on an
// engine, and why pulling the first of them failed.
type MissingImagesError struct {
	Host   string       // the engine's address ("" for the default)
	Mode   harness.Mode // the mode of the instances that need the first image
	Images []string     // the missing images, sorted
	Err    error        // the pull's error (wraps sandbox.ErrImageNotFound)
}

func (e *MissingImagesError) Error() string {
	host := e.Host
	if host == "" {
		host = "the default engine"
	}
	return fmt.Sprintf("%d images missing on %s: %s: %v", len(e.Images), host, strings.Join(e.Images, ", "), e.Err)
}

func (e *MissingImagesError) Unwrap() []error { return []error{ErrImagesMissing, e.Err} }

// EngineLostError reports the instances that ended as errors because an
// engine stopped answering; Err is the first of their errors (it wraps
// sandbox.ErrEngineUnreachable).
type EngineLostError struct {
	Instances []string
	Err       error
}

func (e *EngineLostError) Error() string {
	return fmt.Sprintf("engine lost during the run: %d instances could not be evaluated: %v", len(e.Instances), e.Err)
}

func (e *EngineLostError) Unwrap() []error { return []error{ErrEngineLost, e.Err} }

// InstanceTimeoutError is an instance whose evaluation ran past
// Config.InstanceTimeout, its retries included. It wraps the last loss of
// a sandbox (a *sandbox.LostError) when there was one, and so matches
// sandbox.ErrSandboxLost.
type InstanceTimeoutError struct {
	Timeout       time.Duration
	LostSandboxes int   // attempts the cluster cut short
	Lost          error // the last of them; nil when there was none
}

func (e *InstanceTimeoutError) Error() string {
	msg := fmt.Sprintf("the instance did not finish within its time of %s, which covers every attempt", e.Timeout)
	if e.Lost != nil {
		msg += fmt.Sprintf(" (%d sandboxes lost; the last: %v)", e.LostSandboxes, e.Lost)
	}
	return msg
}

func (e *InstanceTimeoutError) Unwrap() error { return e.Lost }

// TimeoutError is an eval script that ran past its timeout.
type TimeoutError struct{ Timeout time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("test timed out after %d seconds", int(e.Timeout.Seconds()))
}

func (e *TimeoutError) Unwrap() error { return ErrTestTimeout }
