package dataset

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/internal/kinderr"
)

// Sentinel errors callers can branch on with errors.Is. Every error the
// loaders return about a particular input is an *InputError whose Err matches
// one of these.
var (
	// ErrSyntax: the file is not valid JSON / JSONL (including truncation).
	ErrSyntax = errors.New("invalid JSON")
	// ErrWrongType: a value has a JSON type the field does not accept.
	ErrWrongType = errors.New("wrong type")
	// ErrMissingField: a required field is absent, null or empty.
	ErrMissingField = errors.New("missing field")
	// ErrInvalidUTF8: the input holds bytes that are not UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrUnsafeName: an id or name cannot be used as a path component.
	ErrUnsafeName = errors.New("unsafe name")
	// ErrDuplicateID: two dataset rows share an instance id, or two ids
	// differ only in letter case (they would share a log directory on a
	// case-insensitive file system and share an image name).
	ErrDuplicateID = errors.New("duplicate instance id")
	// ErrUnsupportedFormat: the path names something we cannot read (an
	// Arrow save_to_disk directory, a Hugging Face dataset name, which
	// package hub fetches instead, an unknown extension).
	ErrUnsupportedFormat = errors.New("unsupported format")
	// ErrUnknownIDs: predictions or -i ids that are not in the dataset.
	ErrUnknownIDs = errors.New("unknown instance ids")
)

// InputError describes bad input: which file, which line (1-based; 0 when
// unknown) and which JSON field ("" when the problem is not about one field).
type InputError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *InputError) Error() string {
	var b strings.Builder
	if e.File != "" || e.Line > 0 {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *InputError) Unwrap() error { return e.Err }

// kindf is an error with its own message that matches kind.
func kindf(kind error, format string, args ...any) error {
	return kinderr.New(kind, format, args...)
}

// UnknownIDsError lists ids that are not in the dataset. What is
// "prediction" (prediction ids absent from the dataset, the official
// harness's ValueError "Some prediction IDs not found in dataset!") or
// "instance" (an -i id absent from the dataset).
type UnknownIDsError struct {
	What string
	IDs  []string // sorted
}

func (e *UnknownIDsError) Error() string {
	const max = 20
	ids := e.IDs
	more := ""
	if len(ids) > max {
		more = fmt.Sprintf(" (and %d more)", len(ids)-max)
		ids = ids[:max]
	}
	return fmt.Sprintf("%d %s id(s) not found in dataset: %s%s", len(e.IDs), e.What, strings.Join(ids, " "), more)
}

func (e *UnknownIDsError) Is(target error) bool { return target == ErrUnknownIDs }

// UnsafeNameError says why a value cannot be used as a file name.
type UnsafeNameError struct {
	Kind   string // "instance_id", "model_name_or_path", "run_id"
	Value  string
	Reason string
}

func (e *UnsafeNameError) Error() string {
	v := e.Value
	if len(v) > 80 {
		v = v[:80] + "..."
	}
	return fmt.Sprintf("%s %q cannot be used in a file path: %s", e.Kind, v, e.Reason)
}

func (e *UnsafeNameError) Is(target error) bool { return target == ErrUnsafeName }

// Position is where a record came from.
type Position struct {
	File string
	Line int
}

func (p Position) String() string {
	if p.File == "" {
		return "(memory)"
	}
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// errorList collects up to maxErrors input errors so a user sees several
// problems at once instead of fixing them one run at a time.
type errorList struct {
	errs []error
}

const maxErrors = 20

func (l *errorList) add(err error) {
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, err)
	}
}

func (l *errorList) full() bool { return len(l.errs) >= maxErrors }

func (l *errorList) err() error {
	switch {
	case len(l.errs) == 0:
		return nil
	case len(l.errs) == 1:
		return l.errs[0]
	}
	errs := l.errs
	if l.full() {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("(stopped after %d errors)", maxErrors))
	}
	return errors.Join(errs...)
}
