// Package kinderr makes errors that carry a message of their own while
// matching a sentinel with errors.Is, for packages that classify their
// errors by sentinel (dataset, dataset/hub).
package kinderr

import "fmt"

// kindError carries a human message while matching a sentinel, so messages
// read "want a string, got number" rather than "wrong type: want a string,
// got number".
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// New returns an error whose message is the formatted text and which
// matches kind with errors.Is.
func New(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
