package agent

import (
	"errors"
	"fmt"
)

// Sentinel errors. A guest program that fails, times out, runs out of
// memory or whose requirements fail to install is described in its Result,
// not reported as an error; these are for the states callers branch on.
var (
	// ErrInvalidOption: an option or request field has a bad value; the
	// error is an *OptionError naming it.
	ErrInvalidOption = errors.New("invalid option")
	// ErrStateDirBusy: another manager holds the state directory.
	ErrStateDirBusy = errors.New("state directory in use by another manager")
	// ErrClosed: the manager or session was closed.
	ErrClosed = errors.New("closed")
	// ErrSessionExists: Create was given a name already in use.
	ErrSessionExists = errors.New("session exists")
	// ErrSessionNotFound: no session has the name.
	ErrSessionNotFound = errors.New("session not found")
	// ErrNoResolver: a secret was asked for but the manager has no
	// secrets.Resolver (see WithSecretResolver).
	ErrNoResolver = errors.New("no secret resolver")
	// ErrEgressUnsupported: egress was asked for on a runtime that cannot
	// provide it (gVisor's runsc, registered with --network=none, cannot
	// reach the proxy's socket).
	ErrEgressUnsupported = errors.New("egress not supported")
	// ErrInstallFailed: a session's requirements failed to install; the
	// error is an *InstallError with pip's output.
	ErrInstallFailed = errors.New("requirements install failed")
	// ErrFetch: a File's URL could not be fetched, or its content was over
	// the fetch limit.
	ErrFetch = errors.New("fetch failed")
)

// OptionError names the option or field that is invalid. Err is the error
// of the part that refused the value, when there is one (an
// *egress.RuleError, say).
type OptionError struct {
	Field  string
	Reason string
	Err    error
}

func (e *OptionError) Error() string { return fmt.Sprintf("invalid option %s: %s", e.Field, e.Reason) }

func (e *OptionError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidOption}
	}
	return []error{ErrInvalidOption, e.Err}
}

// FetchError reports a File whose URL could not be fetched.
type FetchError struct {
	URL    string
	Status int // HTTP status, 0 when there was no response
	Err    error
}

func (e *FetchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("fetch %s: HTTP status %d", e.URL, e.Status)
	}
	return fmt.Sprintf("fetch %s: %v", e.URL, e.Err)
}

func (e *FetchError) Unwrap() []error { return []error{ErrFetch, e.Err} }
