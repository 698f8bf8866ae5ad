package spec

import (
	"strings"
	"unicode"

	"github.com/swebox/swebox/swebench/harness"
)

// Markers and names shared with the official harness.
const (
	// TestExitCodeVar holds the test command's exit status, printed after
	// harness.ExitCodeMarker (v5): ">>>>> Test Exit Code: N".
	TestExitCodeVar = "SWEBENCH_TEST_EXIT_CODE"
	// HeredocDelimiter delimits the test patch in eval.sh.
	HeredocDelimiter = "EOF_114329324912"

	scriptShebang = "#!/bin/bash"
	scriptSet     = "set -uxo pipefail"
	condaSource   = "source /opt/miniconda3/bin/activate"
	condaActivate = "conda activate testbed"
)

// ScriptOptions adjust EvalScript.
type ScriptOptions struct {
	// SkipInstall leaves out the install step (for images without network
	// access where the package is already importable from /testbed).
	SkipInstall bool
	// NoExitCode leaves out the exit-code lines, giving the official v4.1.0
	// script byte for byte. By default the script records the test
	// command's exit status as v5 does: SWEBENCH_TEST_EXIT_CODE=$? before
	// the end marker, echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"
	// after it.
	NoExitCode bool
	// BeforeTestOutput are commands inserted right before the start marker
	// (where v5 puts the multimodal asset-restore commands).
	BeforeTestOutput []string
	// QuoteUnsafePaths single-quotes test files and directives that hold
	// characters the shell would interpret. The official harness writes
	// them unquoted, so a path with a space or ";" breaks (or injects into)
	// its script; paths made of [A-Za-z0-9_./:=@%+,-] are written as is
	// either way, so official datasets give the same script. Default off.
	QuoteUnsafePaths bool
	// InstallStatusFile, when set, follows the install step of the
	// official Python script with "echo $? > InstallStatusFile", so that
	// the caller learns whether the step, which the script does not stop
	// for, succeeded. Default "": the official script.
	InstallStatusFile string
}

// EvalScript returns eval.sh.
//
// For a row that carries its own eval_script (v5), that script is used as
// v5 uses it: surrounding whitespace stripped, every line that is exactly
// "#!/bin/bash" or "set -uxo pipefail" dropped, the exit-code lines added
// around the first line containing the end marker, and the header put back.
//
// Otherwise, for a Script a family registered ([RegisterScriptStyle]), it
// is what the style's function writes; for Script ScriptCommon, it is the official script of the
// non-Python repositories, and else the official v4.1.0 Python script:
// activate conda (when Conda), cd /testbed, eval_commands, the
// informational git status/show/diff, install, reset the test files to
// base_commit, apply the test patch from a heredoc, the test command
// between the start and end markers, and the reset again. With Conda false
// the two pairs of conda lines are left out and nothing else changes.
func (s TestSpec) EvalScript(opts ScriptOptions) string {
	var lines []string
	if s.DatasetScript != "" {
		lines = parseEvalScript(s.DatasetScript)
		if !opts.NoExitCode {
			lines = recordExitCode(lines)
		}
		script := strings.Join(append([]string{scriptShebang, scriptSet}, lines...), "\n") + "\n"
		return injectBeforeStart(script, opts.BeforeTestOutput)
	}
	if fn := styles[s.Script]; fn != nil {
		return fn(s, opts)
	}

	quote := func(words []string) []string { return words }
	if opts.QuoteUnsafePaths {
		quote = quoteUnsafe
	}
	reset := "git checkout " + s.BaseCommit + " " + strings.Join(quote(s.TestFiles), " ")
	if s.Script == ScriptCommon {
		if len(s.TestFiles) == 0 {
			reset = `echo "No test files to reset"`
		}
		lines = s.commonScript(reset)
	} else {
		lines = s.pythonScript(reset, opts)
	}
	testCmd := strings.Join(append([]string{s.TestCmd}, quote(s.Directives)...), " ")
	lines = append(lines, opts.BeforeTestOutput...)
	lines = append(lines, ": '"+harness.StartTestOutput+"'")
	// The common script writes its list of test commands one per line, so
	// an empty list (a wp-calypso test patch with no runnable path) is no
	// line at all; the Python script writes its one command line even empty.
	if testCmd != "" || s.Script != ScriptCommon {
		lines = append(lines, testCmd)
	}
	if !opts.NoExitCode {
		lines = append(lines, TestExitCodeVar+"=$?")
	}
	lines = append(lines, ": '"+harness.EndTestOutput+"'")
	if !opts.NoExitCode {
		lines = append(lines, exitCodeEcho)
	}
	lines = append(lines, reset)
	return strings.Join(append([]string{scriptShebang, scriptSet}, lines...), "\n") + "\n"
}

// pythonScript is the part of the official Python script before the
// markers.
func (s TestSpec) pythonScript(reset string, opts ScriptOptions) []string {
	var lines []string
	conda := func() {
		if s.Conda {
			lines = append(lines, condaSource, condaActivate)
		}
	}
	conda()
	lines = append(lines, "cd "+harness.RepoDir)
	lines = append(lines, s.EvalCommands...)
	lines = append(lines,
		"git config --global --add safe.directory "+harness.RepoDir,
		"cd "+harness.RepoDir,
		"git status",
		"git show",
		"git -c core.fileMode=false diff "+s.BaseCommit,
	)
	conda()
	if s.Install != "" && !opts.SkipInstall {
		lines = append(lines, s.Install)
		if opts.InstallStatusFile != "" {
			lines = append(lines, "echo $? > "+opts.InstallStatusFile)
		}
	}
	return append(lines,
		reset,
		"git apply -v - <<'"+HeredocDelimiter+"'\n"+s.TestPatch+"\n"+HeredocDelimiter,
	)
}

// commonScript is the part of the official non-Python script before the
// markers.
func (s TestSpec) commonScript(reset string) []string {
	lines := []string{
		"cd " + harness.RepoDir,
		"git config --global --add safe.directory " + harness.RepoDir,
		"cd " + harness.RepoDir,
		reset,
	}
	lines = append(lines, s.Downloads...)
	lines = append(lines, "git apply --verbose --reject - <<'"+HeredocDelimiter+"'\n"+s.TestPatch+"\n"+HeredocDelimiter)
	return append(lines, s.Build...)
}

const exitCodeEcho = `echo "` + harness.ExitCodeMarker + `: $` + TestExitCodeVar + `"`

// parseEvalScript is v5's parse_eval_script.
func parseEvalScript(script string) []string {
	var out []string
	for _, line := range strings.Split(pyStrip(script), "\n") {
		if line != scriptShebang && line != scriptSet {
			out = append(out, line)
		}
	}
	return out
}

// pyStrip trims what Python's str.strip() trims: Unicode whitespace plus
// the separators U+001C..U+001F that Go does not count as space.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

// recordExitCode is v5's record_test_exit_code: around the first line
// that contains the end marker. Without one the script is left alone (and
// grading cannot use the exit code).
func recordExitCode(lines []string) []string {
	for i, line := range lines {
		if strings.Contains(line, harness.EndTestOutput) {
			out := make([]string, 0, len(lines)+2)
			out = append(out, lines[:i]...)
			out = append(out, TestExitCodeVar+"=$?", line, exitCodeEcho)
			return append(out, lines[i+1:]...)
		}
	}
	return lines
}

// injectBeforeStart is v5's _inject_asset_restore: the commands go before
// the first line containing the start marker, or at the end without one.
func injectBeforeStart(script string, cmds []string) string {
	if len(cmds) == 0 {
		return script
	}
	lines := strings.Split(script, "\n")
	for i, line := range lines {
		if strings.Contains(line, harness.StartTestOutput) {
			out := append(append(append([]string{}, lines[:i]...), cmds...), lines[i:]...)
			return strings.Join(out, "\n")
		}
	}
	return script + "\n" + strings.Join(cmds, "\n")
}

// shellSafe reports whether the shell takes word literally.
func shellSafe(word string) bool {
	if word == "" {
		return false
	}
	for _, r := range word {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_./:=@%+,-", r):
		default:
			return false
		}
	}
	return true
}

func quoteUnsafe(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if shellSafe(w) {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return out
}
