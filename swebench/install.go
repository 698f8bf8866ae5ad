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
// upstream's container has: a step that fails here (pip fetching a build
// requirement for an isolated build, say) may have succeeded there.
//
// What a failed step leaves is the image's own install. For an editable
// install (pip's -e or --editable, setup.py develop) that install reads the
// repository's Python sources where they are, so the tests see every
// change to them; only a change to a build input (a compiled extension's
// sources, the build configuration, the package's metadata) would have
// needed the rebuild. So a failed step is an error, ErrInstallFailed, and
// the instance is not graded, when the install is not editable or when a
// patch the script applied before it touches a build input; otherwise the
// instance is graded and its report says that the step failed without the
// network (grade.Notes.Environment), never silently.

// ErrInstallFailed: the eval script's install step failed in a sandbox
// without network. An *InstallError matches it.
var ErrInstallFailed = errors.New("install step failed")

// InstallError reports the install step of an instance's eval script that
// exited non-zero.
type InstallError struct {
	Command  string // the spec's install command
	ExitCode int
	// BuildInputs are the patched files the install would have rebuilt
	// from; empty when the install is not editable (every change needs it).
	BuildInputs []string
}

func (e *InstallError) Error() string {
	why := "the install is not editable, so the tests would run against the image's build of the unpatched sources"
	if len(e.BuildInputs) > 0 {
		why = fmt.Sprintf("the patch changes build inputs (%s) that only a new build brings to the tests", strings.Join(e.BuildInputs, ", "))
	}
	return fmt.Sprintf("the eval script's install step %q exited %d in a sandbox without network; the official harness runs it with network access, where it may have succeeded (e.g. pip fetching a build requirement); %s, so the instance is not graded (test_output.txt holds the step's output)",
		e.Command, e.ExitCode, why)
}

func (e *InstallError) Unwrap() error { return ErrInstallFailed }

// installNote is the report note of an editable install step that failed
// in the sandbox while no patch touched a build input.
func installNote(command string, code int) string {
	return fmt.Sprintf("the install step %q exited %d without network (the official harness runs it with network access); the install is editable and no patch touches a build input, so the tests ran against the image's editable install of the patched sources", command, code)
}

// editableInstall reports whether an install command installs the
// repository editable, so that its Python sources are read in place.
func editableInstall(command string) bool {
	for _, f := range strings.Fields(command) {
		if f == "-e" || f == "--editable" || strings.HasPrefix(f, "--editable=") || f == "develop" {
			return true
		}
	}
	return false
}

// buildInputSuffixes and buildInputNames are the files whose change an
// editable install does not see until it is built again: compiled sources
// and the build's configuration and metadata.
var (
	buildInputSuffixes = []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".pyx", ".pxd", ".pxi",
		".f", ".f90", ".for", ".cu", ".cuh", ".m", ".mm", ".rs", ".go", ".toml", ".cfg", ".in", ".build", ".cmake", ".spec"}
	buildInputNames = []string{"setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "meson.build", "meson_options.txt",
		"CMakeLists.txt", "Makefile", "Cargo.toml", "Cargo.lock", "build.py", "PKG-INFO", "requirements.txt", "environment.yml"}
)

// buildInputs returns the files of the patches (old and new names) that
// are build inputs; a name that cannot be read counts as one.
func buildInputs(patches ...string) []string {
	var out []string
	for _, patch := range patches {
		for _, line := range strings.Split(patch, "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "diff --git ")
			if !ok {
				continue
			}
			a, b, ok := strings.Cut(rest, " b/")
			if !ok || !strings.HasPrefix(a, "a/") {
				out = append(out, rest) // quoted or odd names: assume the worst
				continue
			}
			names := []string{a[2:]}
			if b != a[2:] {
				names = append(names, b)
			}
			for _, name := range names {
				if isBuildInput(name) {
					out = append(out, name)
				}
			}
		}
	}
	return out
}

func isBuildInput(name string) bool {
	base := name[strings.LastIndex(name, "/")+1:]
	for _, n := range buildInputNames {
		if base == n {
			return true
		}
	}
	for _, s := range buildInputSuffixes {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	return false
}

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
// none) once the eval script has run, patches being those the script
// applied before the step. A step that failed is an *InstallError, or a
// note for the report when the install is editable and no patch touches a
// build input (see above). A script that never reached the step wrote
// nothing, and nothing is reported.
func (e *evaluator) checkInstall(ctx context.Context, sb *sandbox.Sandbox, ilog *instanceLog, ts spec.TestSpec, path string, patches ...string) (note string, err error) {
	if path == "" {
		return "", nil
	}
	r, err := e.exec(ctx, sb, sandbox.ExecRequest{Cmd: []string{"bash", "-c", `read -r s < "$0" && echo "$s"`, path}, Timeout: patchTimeout, OutputLimit: 64})
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return "", nil
	}
	code, err := strconv.Atoi(strings.TrimSpace(r.Stdout.String()))
	if err != nil {
		return "", fmt.Errorf("read the install step's exit status from %s: %w", path, err)
	}
	if code == 0 {
		ilog.printf("Install step %q succeeded", ts.Install)
		return "", nil
	}
	if !editableInstall(ts.Install) {
		return "", &InstallError{Command: ts.Install, ExitCode: code}
	}
	if inputs := buildInputs(patches...); len(inputs) > 0 {
		return "", &InstallError{Command: ts.Install, ExitCode: code, BuildInputs: inputs}
	}
	note = installNote(ts.Install, code)
	ilog.printf("Install step: %s", note)
	return note, nil
}
