package spec

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
)

// Procedure is how a family's harness runs a row where it differs from
// the official SWE-bench harness: where the repository is, which patches
// the evaluator applies and with which commands, what a patch that does
// not apply means, and how the eval script's output becomes the log. The
// zero value is the official harness's procedure.
type Procedure struct {
	// Workdir is where the repository is, the patches are applied and
	// the eval script runs; "" is [harness.RepoDir].
	Workdir string
	// PatchCommands is the fallback chain every patch is applied with:
	// each an argv to which the patch's path is appended, the first to
	// exit 0 wins. nil is the official chain of the run's rules
	// ([PatchCommands]).
	PatchCommands [][]string
	// TestPatchFirst: the evaluator applies the row's test patch, with
	// the same chain, before the model patch (the eval script then runs
	// the test command only).
	TestPatchFirst bool
	// PatchFailureGraded: a patch that does not apply is a graded,
	// unresolved instance (a report.json without test results), as the
	// family's harness records it, rather than an error instance.
	PatchFailureGraded bool
	// ScriptAppliesPatch: the eval script applies the model patch itself
	// and goes on whatever that gives (SWE-bench Pro's entry script runs
	// git apply on it, then the tests); the evaluator stages the patch at
	// Dir()/.git/swebox/patch.diff and applies nothing.
	ScriptAppliesPatch bool
	// Log is how the eval script's output becomes test_output.txt; ""
	// is [LogMerged].
	Log LogStyle
	// Staging is the directory, existing in the image and on Workdir's
	// writable mount, under which the evaluator stages the patches and
	// the eval script (in its subdirectory "swebox"); "" is Dir()/.git.
	// Multi-SWE-bench's images have the repository below the working
	// directory, at /home/<repo>, whose .git it is.
	Staging string
}

// LogStyle is how the eval script's output becomes the log.
type LogStyle string

const (
	// LogMerged: standard error joins standard output as it is written
	// (the official harness's exec with merged streams).
	LogMerged LogStyle = ""
	// LogStderrFirst: all of standard error, then all of standard
	// output, then "\nContainer exited with status code: N" twice, N the
	// script's exit status (SWE-PolyBench's docker_run: the demuxed
	// streams joined stderr first, and run_logs joined with newlines).
	LogStderrFirst LogStyle = "stderr-first"
)

// Dir is where the repository is: Workdir, else [harness.RepoDir].
func (p Procedure) Dir() string {
	if p.Workdir == "" {
		return harness.RepoDir
	}
	return p.Workdir
}

// Patches is the fallback chain for the patch at path under rules (see
// PatchCommands).
func (p Procedure) Patches(rules harness.Rules, path string) ([][]string, error) {
	if p.PatchCommands == nil {
		return PatchCommands(rules, path)
	}
	out := make([][]string, len(p.PatchCommands))
	for i, argv := range p.PatchCommands {
		out[i] = append(append([]string(nil), argv...), path)
	}
	return out, nil
}

// StagingDir is where the evaluator stages files: Staging, else Dir()/.git.
func (p Procedure) StagingDir() string {
	if p.Staging == "" {
		return p.Dir() + "/.git"
	}
	return p.Staging
}

// Trailer is what the log style appends after the script's output, given
// its exit status.
func (s LogStyle) Trailer(exitCode int) string {
	if s != LogStderrFirst {
		return ""
	}
	line := fmt.Sprintf("Container exited with status code: %d", exitCode)
	return "\n" + line + "\n" + line
}

// Official reports whether p is the official harness's procedure.
func (p Procedure) Official() bool {
	return p.Workdir == "" && p.PatchCommands == nil && !p.TestPatchFirst && !p.PatchFailureGraded && !p.ScriptAppliesPatch && p.Log == LogMerged && p.Staging == ""
}
