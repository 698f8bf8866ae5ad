package sandbox

import (
	"path"
	"slices"
	"strings"
)

// defaultCommands is the allowlist for test runs: what applying a patch and
// running a Python test suite needs.
var defaultCommands = []string{
	"git", "patch", "pytest", "python", "python3", "pip", "pip3",
	"cat", "ls", "echo", "find", "grep", "head", "tail", "mkdir", "cp", "mv", "touch", "chmod",
}

// shells are the base names that make Shell available when a policy admits one.
var shells = []string{"sh", "bash", "dash"}

// Policy decides which commands a sandbox runs. The check is on the base name
// of argv[0] and happens before any engine call. It is a guard against
// mistakes and prompt-driven misuse, not a security boundary: an admitted
// interpreter can still run anything; the container's hardening is the
// boundary.
//
// The zero Policy admits [DefaultCommands].
type Policy struct {
	// AllowAll admits every command, for general agent use.
	AllowAll bool
	// Commands lists the admitted base names. Nil means DefaultCommands();
	// an empty non-nil slice admits nothing.
	Commands []string
}

// DefaultCommands returns the allowlist of the zero Policy, for test runs:
// what applying a patch and running a Python test suite needs. The slice is
// a copy.
func DefaultCommands() []string { return slices.Clone(defaultCommands) }

// AllowAll is the policy that admits any command.
func AllowAll() Policy { return Policy{AllowAll: true} }

// AllowCommands is the policy that admits exactly names.
func AllowCommands(names ...string) Policy {
	return Policy{Commands: append([]string{}, names...)}
}

func (p Policy) commands() []string {
	if p.Commands == nil {
		return defaultCommands
	}
	return p.Commands
}

// Check returns a *CommandError when argv's command is not admitted.
func (p Policy) Check(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &SpecError{Field: "Cmd", Reason: "empty command"}
	}
	if p.AllowAll {
		return nil
	}
	name := path.Base(argv[0])
	if slices.Contains(p.commands(), name) {
		return nil
	}
	return &CommandError{Command: name, Allowed: slices.Clone(p.commands())}
}

// Shell returns the shell the policy admits ("sh" first), or "" when none.
func (p Policy) Shell() string {
	for _, s := range shells {
		if p.AllowAll || slices.Contains(p.commands(), s) {
			return s
		}
	}
	return ""
}

func (p Policy) String() string {
	if p.AllowAll {
		return "allow all"
	}
	return "allow " + strings.Join(p.commands(), ",")
}
