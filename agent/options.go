package agent

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"time"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/sandbox"
)

// SandboxOptions configure the sandbox of a one-shot run or a session:
// the fields RunOptions and SessionOptions share.
type SandboxOptions struct {
	// Image to run. Default: the manager's (DefaultImage).
	Image string
	// Env is set for the program (in a session, for every command). Values
	// are visible in the container's configuration; pass credentials as
	// Secrets.
	Env map[string]string
	// Secrets maps environment variable names to logical secret names,
	// which the manager's secrets.Resolver turns into values (for a
	// session, when its container starts, exported to every command).
	// Values never appear in the container's configuration and are masked
	// in results.
	Secrets map[string]string
	// Files are written into the workspace's mounts/ directory first (for
	// a session, when it is created).
	Files []File
	// Requirements are installed into a virtual environment at
	// /workspace/.venv first; environments are cached by the hash of the
	// requirements. Session.Install adds more to a session's.
	Requirements Requirements
	// Egress grants network access to the listed hosts, through an
	// egress.Proxy the manager runs. It needs python3 in the image and the
	// runc runtime. Default: no network.
	Egress egress.Allowlist
	// Limits on resources; zero fields take the sandbox package's defaults.
	Limits sandbox.Limits
	// Runtime is the OCI runtime, e.g. "runsc". Default: the engine's.
	Runtime string
}

// RunOptions configure a one-shot run: the sandbox it gets and the command.
// The zero value runs the default image with the hardened defaults, no
// network and a one-minute timeout.
type RunOptions struct {
	SandboxOptions
	// Timeout bounds the run (not the install). Default: DefaultTimeout.
	Timeout time.Duration
	// Args are passed to the program: sys.argv[1:] or the script's $@.
	Args []string
	// Stdin is the program's standard input. Default: empty.
	Stdin []byte
	// OutputLimit is the bytes kept per stream (head and tail). Default:
	// the sandbox package's, 1 MiB.
	OutputLimit int
	// Artifacts caps what comes back from output/.
	Artifacts ArtifactOptions
	// Shell runs RunShell scripts. Default "/bin/sh".
	Shell string
	// Stdout and Stderr, when set, receive the program's output live, as
	// it is written, besides the capped copy in the Result (a caller can
	// show progress of a long run). They receive everything, uncapped and
	// unmasked, so they cannot be combined with Secrets. Install output
	// is not streamed. Default: none.
	Stdout, Stderr io.Writer
}

// SessionOptions configure a session's sandbox. They are fixed for the
// session's life; per-call settings are in ExecOptions.
type SessionOptions struct {
	SandboxOptions
	// IdleTimeout ends the session after this long without a call; negative
	// never. Default: the manager's.
	IdleTimeout time.Duration
	// Persistent keeps the workspace when the session idles out (only the
	// container goes, and comes back on the next call) and when the manager
	// closes, so that a manager on the same state directory can resume the
	// session by name. Remove deletes it.
	Persistent bool
}

// ExecOptions configure one command in a session.
type ExecOptions struct {
	// Env is added to the session's for this command.
	Env map[string]string
	// Secrets maps environment variable names to logical secret names for
	// this command only.
	Secrets map[string]string
	// Files are written into mounts/ before the command.
	Files []File
	// Timeout bounds the command. Default: DefaultTimeout.
	Timeout time.Duration
	// Args are passed to the program.
	Args []string
	// Stdin is the program's standard input. Default: empty.
	Stdin []byte
	// OutputLimit is the bytes kept per stream. Default 1 MiB.
	OutputLimit int
	// Artifacts caps what comes back from output/: files created or
	// changed by this command.
	Artifacts ArtifactOptions
	// Shell runs RunShell scripts. Default "/bin/sh".
	Shell string
	// Stdout and Stderr, when set, receive the program's output live, as
	// it is written, besides the capped copy in the Result (a caller can
	// show progress of a long run). They receive everything, uncapped and
	// unmasked, so they cannot be combined with Secrets. Install output
	// is not streamed. Default: none.
	Stdout, Stderr io.Writer
}

// ArtifactOptions cap the artifacts a run returns.
type ArtifactOptions struct {
	// MaxFiles is the most artifacts listed. Default DefaultMaxArtifacts.
	MaxFiles int
	// MaxBytes is the most content returned in all; a file that does not
	// fit is listed without Data. Default DefaultMaxArtifactBytes.
	MaxBytes int64
	// Disabled skips artifact collection.
	Disabled bool
}

func (o ArtifactOptions) withDefaults() ArtifactOptions {
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxArtifacts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxArtifactBytes
	}
	return o
}

// split separates a one-shot's options into the sandbox's and the command's.
func (o RunOptions) split() (SessionOptions, ExecOptions) {
	so := o.SandboxOptions
	so.Secrets = nil // a one-shot run's secrets go with its command
	return SessionOptions{SandboxOptions: so}, ExecOptions{
		Secrets: o.Secrets, Timeout: o.Timeout, Args: o.Args, Stdin: o.Stdin,
		OutputLimit: o.OutputLimit, Artifacts: o.Artifacts, Shell: o.Shell,
		Stdout: o.Stdout, Stderr: o.Stderr,
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (o SessionOptions) validate() error {
	if err := validateEnv("Env", o.Env); err != nil {
		return err
	}
	if err := validateSecrets(o.Secrets); err != nil {
		return err
	}
	if err := validateEgress("Egress", o.Egress, o.Runtime); err != nil {
		return err
	}
	return o.Requirements.validate(o.Runtime)
}

func (o ExecOptions) validate() error {
	if err := validateEnv("ExecOptions.Env", o.Env); err != nil {
		return err
	}
	if err := validateSecrets(o.Secrets); err != nil {
		return err
	}
	return o.validateLive(len(o.Secrets) > 0)
}

// validateLive refuses live output where secrets are in play: the result's
// copy is masked, a live writer's could not be.
func (o ExecOptions) validateLive(secrets bool) error {
	if secrets && (o.Stdout != nil || o.Stderr != nil) {
		return &OptionError{Field: "Stdout", Reason: "live output is not masked, so it cannot be combined with secrets"}
	}
	return nil
}

// validateEgress checks an allowlist and that the runtime can reach the
// proxy: gVisor's runsc, registered with --network=none, cannot.
func validateEgress(field string, a egress.Allowlist, runtime string) error {
	if !a.Enabled() {
		return nil
	}
	if runtime == "runsc" {
		return fmt.Errorf("%w with runtime runsc: gVisor is registered with --network=none and cannot reach the proxy; use runc", ErrEgressUnsupported)
	}
	if err := a.Validate(); err != nil {
		return &OptionError{Field: field + ".Hosts", Reason: err.Error(), Err: err}
	}
	return nil
}

func validateEnv(field string, env map[string]string) error {
	for k := range env {
		if !envName.MatchString(k) {
			return optErr(field, "%q is not a valid environment variable name", k)
		}
	}
	return nil
}

func validateSecrets(s map[string]string) error {
	for k, v := range s {
		if !envName.MatchString(k) {
			return optErr("Secrets", "%q is not a valid environment variable name", k)
		}
		if v == "" {
			return optErr("Secrets", "%s names no secret", k)
		}
	}
	return nil
}

// merge returns a copy of a with b's entries on top.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

func optErr(field, format string, args ...any) error {
	return &OptionError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
