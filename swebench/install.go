package swebench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// The official Python eval script runs the repository's install step again
// (e.g. "python -m pip install -e ."), so that a patch to a compiled
// extension or to the package's metadata is rebuilt before the tests, and
// goes on when the step fails. In prebuilt mode the root filesystem is
// writable, as in the official container, so the step rebuilds in place
// with what the image holds. The sandbox has no network, though, and
// upstream's container has: a step that fails here may have succeeded
// there (pip fetching a build requirement, say), and the tests would then
// run against a build upstream's would not have. Such an instance is an
// error, ErrInstallFailed, and not graded.

// ErrInstallFailed: the eval script's install step failed in a sandbox
// without network. An *InstallError matches it.
var ErrInstallFailed = errors.New("install step failed")

// InstallError reports the install step of an instance's eval script that
// exited non-zero.
type InstallError struct {
	Command  string // the spec's install command
	ExitCode int
}

func (e *InstallError) Error() string {
	return fmt.Sprintf("the eval script's install step %q exited %d in a sandbox without network; the official harness runs it with network access, where it may have succeeded (e.g. pip fetching a build requirement) and the tests would have run against that build, so the instance is not graded (test_output.txt holds the step's output)",
		e.Command, e.ExitCode)
}

func (e *InstallError) Unwrap() error { return ErrInstallFailed }

// installStatusFile is where the eval script writes its install step's exit
// status (a tmpfs of the sandbox), for the official Python script of a
// prebuilt image with an install step; "" otherwise.
func installStatusFile(mode harness.Mode, ts spec.TestSpec) string {
	if mode != harness.ModePrebuilt || ts.Install == "" || ts.DatasetScript != "" || (ts.Script != "" && ts.Script != spec.ScriptPython) {
		return ""
	}
	return "/tmp/.swebox-install-status"
}

// checkInstall reads the install step's exit status from path ("" for
// none) once the eval script has run: a non-zero one is an *InstallError.
// A script that never reached the step wrote nothing, and nothing is
// reported.
func (e *evaluator) checkInstall(ctx context.Context, sb *sandbox.Sandbox, ilog *instanceLog, ts spec.TestSpec, path string) error {
	if path == "" {
		return nil
	}
	r, err := e.exec(ctx, sb, sandbox.ExecRequest{Cmd: []string{"bash", "-c", `read -r s < "$0" && echo "$s"`, path}, Timeout: patchTimeout, OutputLimit: 64})
	if err != nil {
		return err
	}
	if r.ExitCode != 0 {
		return nil
	}
	code, err := strconv.Atoi(strings.TrimSpace(r.Stdout.String()))
	if err != nil {
		return fmt.Errorf("read the install step's exit status from %s: %w", path, err)
	}
	if code != 0 {
		return &InstallError{Command: ts.Install, ExitCode: code}
	}
	ilog.printf("Install step %q succeeded", ts.Install)
	return nil
}
