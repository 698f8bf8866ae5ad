package spec

import (
	"strings"

	"github.com/swebox/swebox/swebench/harness"
)

// ScriptSWEBench2 is the eval script of SWE-bench 2.0.13
// (test_spec.py's make_eval_script_list), which SWE-bench's forks of that
// release keep (SWE-Gym/SWE-Bench-Fork): "set -xo pipefail", "git diff
// <base>" without -c core.fileMode=false, and no start or end marker
// around the test command, whose output the release's grader reads whole.
const ScriptSWEBench2 ScriptStyle = "swe-bench-2.0.13"

// script2 is eval.sh in the ScriptSWEBench2 style: as pythonScript, with
// the differences above. The exit-code lines follow the test command
// unless opts.NoExitCode (the release has none; the grader never reads
// them), and opts.BeforeTestOutput goes right before the test command.
func (s TestSpec) script2(opts ScriptOptions) string {
	quote := func(words []string) []string { return words }
	if opts.QuoteUnsafePaths {
		quote = quoteUnsafe
	}
	reset := "git checkout " + s.BaseCommit + " " + strings.Join(quote(s.TestFiles), " ")
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
		"git diff "+s.BaseCommit,
	)
	conda()
	if s.Install != "" && !opts.SkipInstall {
		lines = append(lines, s.Install)
	}
	lines = append(lines,
		reset,
		"git apply -v - <<'"+HeredocDelimiter+"'\n"+s.TestPatch+"\n"+HeredocDelimiter,
	)
	lines = append(lines, opts.BeforeTestOutput...)
	lines = append(lines, strings.Join(append([]string{s.TestCmd}, quote(s.Directives)...), " "))
	if !opts.NoExitCode {
		lines = append(lines, TestExitCodeVar+"=$?", exitCodeEcho)
	}
	lines = append(lines, reset)
	return strings.Join(append([]string{scriptShebang, "set -xo pipefail"}, lines...), "\n") + "\n"
}
