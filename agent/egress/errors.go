package egress

import (
	"errors"
	"fmt"
)

// ErrInvalidRule: an entry of Allowlist.Hosts is not a host name, an
// address or a prefix; the error is a *RuleError naming it.
var ErrInvalidRule = errors.New("invalid allowlist entry")

// RuleError names the entry of Allowlist.Hosts that is invalid.
type RuleError struct {
	Entry  string
	Reason string
}

func (e *RuleError) Error() string { return fmt.Sprintf("allowlist entry %q: %s", e.Entry, e.Reason) }

func (e *RuleError) Unwrap() error { return ErrInvalidRule }
