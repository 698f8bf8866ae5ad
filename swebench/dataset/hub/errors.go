package hub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/internal/kinderr"
)

// Sentinel errors callers can branch on with errors.Is; every error Load
// returns about a dataset is an *Error whose Err matches one of these or
// wraps the dataset package's errors (dataset.ErrBadParquet for a file that
// is not Parquet, dataset.InputError for a bad row).
var (
	// ErrNotFound: the Hub has no such dataset, config or split (HTTP 404;
	// also 401 without a token, the Hub's answer for a private or unknown
	// repository).
	ErrNotFound = errors.New("not found")
	// ErrAccess: the Hub refused the token (HTTP 401 or 403 with HF_TOKEN
	// set; a gated dataset whose terms were not accepted).
	ErrAccess = errors.New("access denied")
	// ErrUnreachable: the Hub could not be reached or failed (a network
	// error, a download cut short, HTTP 5xx), and no cached copy exists.
	ErrUnreachable = errors.New("hub unreachable")
	// ErrBadResponse: the Hub answered with something that is not what the
	// API promises (the file list is not a JSON list of URLs).
	ErrBadResponse = errors.New("unexpected response")
	// ErrBadName: the dataset, config or split name cannot be a Hub name.
	ErrBadName = errors.New("bad dataset name")
	// ErrTooLarge: a file is larger than the client allows
	// (WithMaxFileSize).
	ErrTooLarge = errors.New("file too large")
)

// Error is a failure to load one dataset split: which dataset, which URL
// (the API call or the Parquet file), the HTTP status when there was one.
type Error struct {
	Dataset string // "owner/name" after alias expansion
	Split   string
	URL     string
	Status  int // HTTP status; 0 when there was no response
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dataset %s", e.Dataset)
	if e.Split != "" {
		fmt.Fprintf(&b, " (split %s)", e.Split)
	}
	if e.URL != "" {
		fmt.Fprintf(&b, ": %s", e.URL)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// kindf is an error with its own message that matches kind.
func kindf(kind error, format string, args ...any) error {
	return kinderr.New(kind, format, args...)
}

// unreachable wraps a transport error so it matches ErrUnreachable and
// still unwraps to the cause (context.Canceled, a *net.OpError).
type unreachable struct{ err error }

func (e *unreachable) Error() string        { return "hub unreachable: " + e.err.Error() }
func (e *unreachable) Unwrap() error        { return e.err }
func (e *unreachable) Is(target error) bool { return target == ErrUnreachable }
