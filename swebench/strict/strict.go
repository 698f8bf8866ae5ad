package strict

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
)

//go:embed swebox_strict.py
var plugin []byte

// PluginModule is the name of the pytest plugin the strict script loads
// ("-p swebox_strict"); PluginFile its file name.
const (
	PluginModule = "swebox_strict"
	PluginFile   = PluginModule + ".py"
)

// Plugin returns the source of the pytest plugin that writes the runner's
// report.
func Plugin() []byte { return bytes.Clone(plugin) }

// Action is what a rule did about what it found.
type Action string

const (
	// Restored: the file was put back as the base commit (or the test
	// patch) has it before the tests ran; the tests then decide.
	Restored Action = "restored"
	// Refused: the instance is not resolved, whatever the tests say.
	Refused Action = "refused"
)

// Rules of strict grading, as findings name them.
const (
	RuleTestPatch   = "test-patch"        // the test patch is applied as a hard requirement
	RuleTestFiles   = "test-files"        // files of the graded tests are the dataset's
	RuleInfra       = "test-infra"        // conftest.py, pytest.ini, sitecustomize.py, *.pth
	RuleConfig      = "pytest-config"     // pytest sections of tox.ini, setup.cfg, pyproject.toml
	RuleRunner      = "runner"            // the test runner and interpreter come from the image
	RuleChannel     = "runner-report"     // results come from the runner's own signed report
	RuleTamper      = "tamper"            // the test machinery is not rebound during the tests
	RuleExitStatus  = "exit-status"       // the process's exit status is the runner's
	RuleAgreement   = "log-agreement"     // the log and the runner's report agree on every graded test
	RuleMarkers     = "markers"           // the harness's markers appear once, in order
	RuleConflicting = "conflicting-lines" // no graded test is reported both passing and failing
)

// Finding is one thing a rule found and what it did about it.
type Finding struct {
	Rule   string `json:"rule"`
	Action Action `json:"action"`
	Path   string `json:"path,omitempty"`
	Detail string `json:"detail"`
}

// String is the finding as report.json and the run report write it:
// "refused by test-patch: ...", "restored by test-infra: conftest.py (...)".
func (f Finding) String() string {
	s := string(f.Action) + " by " + f.Rule + ": "
	if f.Path != "" {
		s += f.Path + " ("
		return s + f.Detail + ")"
	}
	return s + f.Detail
}

// Run is the strict part of one evaluation of one instance: where the
// script keeps its files in the sandbox and the key that signs the runner's
// records. Make one per attempt with [NewRun].
type Run struct {
	// Dir is a directory the script creates in the sandbox's /tmp, named
	// at random.
	Dir string
	// Key signs the plugin's records; it reaches the sandbox only in the
	// script text, which reads itself into memory and removes its file
	// before anything of the patch runs.
	Key string
}

// NewRun returns a Run with a fresh directory name and key.
func NewRun() Run {
	return Run{Dir: "/tmp/swebox-strict-" + randomHex(8), Key: randomHex(32)}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ScriptInput is what [Run.Script] needs of the instance.
type ScriptInput struct {
	BaseCommit string
	TestPatch  string
	// Tests are the FAIL_TO_PASS and PASS_TO_PASS names; the files of
	// those written as pytest node ids ("path::name") are restored.
	Tests []string
	// PluginDir is where the plugin file was staged in the sandbox.
	PluginDir string
}

// Script rewrites an eval script for strict grading (see the package
// doc). The second result says whether the test command is pytest's, so
// that the runner's report is the channel; without it the log is, and
// only the repository guard and the log rules apply.
func (r Run) Script(script string, in ScriptInput) (string, bool) {
	lines := strings.Split(script, "\n")
	added, touched := patchFiles(in.TestPatch)
	var out []string
	channel := false
	q := shellQuote
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "git apply") && strings.Contains(line, "<<'EOF_114329324912'"):
			// The files the test patch creates are removed first: the
			// model's own copy of one would make the apply fail and then
			// be what runs (SWE-bench #538).
			out = append(out, "mkdir -p -m 700 "+q(r.Dir)+" && : > "+q(r.Dir+"/findings")+" || exit 97")
			for _, f := range added {
				out = append(out, "if [ -e "+q(f)+" ] || [ -L "+q(f)+" ]; then rm -rf -- "+q(f)+"; printf 'restored\\t%s\\t%s\\t%s\\n' "+
					q(RuleTestPatch)+" "+q(f)+" 'the patch wrote this file, which the test patch creates' >> "+q(r.Dir+"/findings")+"; fi")
			}
			out = append(out, line)
			for i++; i < len(lines); i++ {
				out = append(out, lines[i])
				if lines[i] == "EOF_114329324912" {
					break
				}
			}
			out = append(out, "swebox_tp=$?")
		case strings.Contains(line, harness.StartTestOutput) && strings.HasPrefix(line, ":"):
			out = append(out, r.guard(in, touched)...)
			out = append(out, line)
			if i+1 < len(lines) && isPytest(lines[i+1]) {
				channel = true
				i++
				cmd := lines[i]
				rest := strings.TrimPrefix(strings.TrimPrefix(cmd, "python -m "), "pytest")
				out = append(out, "SWEBOX_STRICT_KEY="+q(r.Dir+"/key")+" SWEBOX_STRICT_OUT="+q(r.Dir+"/results")+
					" SWEBOX_STRICT_CHANGED="+q(r.Dir+"/changed")+" PYTHONPATH="+q(in.PluginDir)+"${PYTHONPATH:+:$PYTHONPATH} "+
					strings.TrimSuffix(cmd, rest)+" -p "+PluginModule+rest)
				out = append(out, "swebox_exit=$?; { set +x; } 2>/dev/null; echo \"$swebox_exit\" > "+q(r.Dir+"/exit")+"; set -x; (exit $swebox_exit)")
			}
		default:
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), channel
}

// isPytest reports whether a test command line runs pytest itself (not
// through tox or a script), so that -p and PYTHONPATH reach it.
func isPytest(cmd string) bool {
	return cmd == "pytest" || strings.HasPrefix(cmd, "pytest ") || strings.HasPrefix(cmd, "python -m pytest")
}

// guard is the repository guard the script runs right before the start
// marker, after the install step and the test patch: every path that
// differs from the base commit (tracked changes and untracked files,
// ignored ones too) is looked at; test infrastructure the patch changed is
// put back as the base commit has it, with a finding for each.
func (r Run) guard(in ScriptInput, testPatchFiles []string) []string {
	q := shellQuote
	skip := map[string]bool{}
	for _, f := range testPatchFiles {
		skip[f] = true
	}
	var graded []string
	seen := map[string]bool{}
	for _, t := range in.Tests {
		if i := strings.Index(t, "::"); i > 0 {
			p := t[:i]
			if !skip[p] && !seen[p] && strings.HasSuffix(p, ".py") {
				seen[p] = true
				graded = append(graded, p)
			}
		}
	}
	var b strings.Builder
	b.WriteString("{ set +x; } 2>/dev/null\n")
	b.WriteString("unset PYTEST_ADDOPTS PYTEST_PLUGINS PYTHONSTARTUP PYTHONINSPECT\n")
	fmt.Fprintf(&b, "swebox_base=%s; swebox_d=%s\n", q(in.BaseCommit), q(r.Dir))
	b.WriteString("swebox_skip=(")
	for _, f := range testPatchFiles {
		b.WriteString(" " + q(f))
	}
	b.WriteString(" )\nswebox_graded=(")
	for _, f := range graded {
		b.WriteString(" " + q(f))
	}
	b.WriteString(" )\n")
	b.WriteString(`swebox_in() { local x=$1 y; shift; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }
swebox_git() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c diff.external= "$@"; }
swebox_restore() { # path rule why
  if swebox_git cat-file -e "$swebox_base:$1" 2>/dev/null; then rm -rf -- "$1"; swebox_git checkout -q "$swebox_base" -- "$1"; else rm -rf -- "$1"; fi
  printf 'restored\t%s\t%s\t%s\n' "$2" "$1" "$3" >> "$swebox_d/findings"
}
swebox_pysect() { awk 'BEGIN{s=0} /^[[:space:]]*\[/{s=($0 ~ /^[[:space:]]*\[(pytest|tool:pytest|tool\.pytest(\.ini_options)?)\][[:space:]]*$/)} s' ; }
if [ "${swebox_tp:-0}" != 0 ]; then printf 'refused\t%s\t\t%s\n' test-patch 'the test patch did not apply (git apply exited '"$swebox_tp"'): the tests that ran are not the dataset'"'"'s' >> "$swebox_d/findings"; fi
: > "$swebox_d/changed"
{ swebox_git diff --name-only --no-renames -z "$swebox_base" -- 2>/dev/null; swebox_git ls-files -z --others 2>/dev/null; } | sort -zu | while IFS= read -r -d '' swebox_f; do
  swebox_in "$swebox_f" ${swebox_skip[@]+"${swebox_skip[@]}"} && continue
  swebox_name=${swebox_f##*/}
  case "$swebox_name" in
    conftest.py|sitecustomize.py|usercustomize.py|*.pth|pytest.ini|.pytest.ini)
      swebox_restore "$swebox_f" test-infra "pytest or the interpreter loads it before the tests; the patch changed it"; continue;;
    tox.ini|setup.cfg|pyproject.toml)
      if [ "$(swebox_git show "$swebox_base:$swebox_f" 2>/dev/null | swebox_pysect)" != "$( [ -f "$swebox_f" ] && swebox_pysect < "$swebox_f")" ]; then
        swebox_restore "$swebox_f" pytest-config "the patch changed its pytest section (options, plugins, addopts)"; continue
      fi;;
  esac
  if swebox_in "$swebox_f" ${swebox_graded[@]+"${swebox_graded[@]}"}; then swebox_restore "$swebox_f" test-files "it holds graded tests, which the patch may not rewrite"; continue; fi
  printf '%s\n' "$swebox_f" >> "$swebox_d/changed"
done
for swebox_w in pytest python python3; do
  swebox_p=$(command -v "$swebox_w" 2>/dev/null || true)
  case "$swebox_p" in /testbed/*|./*|"$PWD"/*) printf 'refused\t%s\t%s\t%s\n' runner "$swebox_p" "the $swebox_w the tests would run is a file of the repository" >> "$swebox_d/findings";; esac
done
`)
	fmt.Fprintf(&b, "umask 077; printf '%%s' %s > \"$swebox_d/key\"; umask 022\n", q(r.Key))
	b.WriteString("set -x")
	return []string{b.String()}
}

// patchFiles returns the paths a patch creates and every path it touches
// (the b/ side of each "diff --git" header).
func patchFiles(patch string) (added, touched []string) {
	lines := strings.Split(patch, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "diff --git ") {
			continue
		}
		j := strings.LastIndex(line, " b/")
		if j < 0 {
			continue
		}
		p := line[j+3:]
		touched = append(touched, p)
		for k := i + 1; k < len(lines) && !strings.HasPrefix(lines[k], "diff --git ") && !strings.HasPrefix(lines[k], "@@"); k++ {
			if strings.HasPrefix(lines[k], "new file mode") || lines[k] == "--- /dev/null" {
				added = append(added, p)
				break
			}
		}
	}
	return added, touched
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// CollectCommand prints what the script left in the run's directory,
// each part after a separator line the tests could not have known.
func (r Run) CollectCommand() (cmd []string, sep string) {
	sep = "--swebox-strict-" + randomHex(8) + "--"
	q := shellQuote
	s := fmt.Sprintf("cd %s 2>/dev/null || exit 0; for f in findings exit results; do echo %s\"$f\"; cat \"$f\" 2>/dev/null; done", q(r.Dir), q(sep))
	return []string{"bash", "-c", s}, sep
}

// Evidence is what a strict run left for the grader.
type Evidence struct {
	// Channel says the runner's report was expected (a pytest command).
	Channel bool
	// Findings of the repository guard and of the runner's report.
	Findings []Finding
	// Ran: the plugin started; Ended: it wrote its closing record, with
	// the session's exit status EndExit.
	Ran, Ended bool
	EndExit    int
	// ExitCode is the test command's exit status, as the script recorded
	// it; nil when it did not.
	ExitCode *int
	// Tests are the runner's outcomes by node id (PASSED, FAILED, ERROR,
	// SKIPPED, XFAIL, XPASS), in the order they ended.
	Tests []TestOutcome
	// Unsigned counts records whose signature did not verify.
	Unsigned int
}

// TestOutcome is one test as the runner reported it.
type TestOutcome struct{ ID, Status string }

// ParseCollected reads the output of [Run.CollectCommand].
func (r Run) ParseCollected(out []byte, sep string, channel bool) Evidence {
	ev := Evidence{Channel: channel}
	parts := map[string]string{}
	cur := ""
	var buf strings.Builder
	flush := func() {
		if cur != "" {
			parts[cur] = buf.String()
		}
		buf.Reset()
	}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), sep); ok {
			flush()
			cur = name
			continue
		}
		buf.WriteString(line)
	}
	flush()
	ev.Findings = append(ev.Findings, parseFindings(parts["findings"])...)
	if n, err := strconv.Atoi(strings.TrimSpace(parts["exit"])); err == nil {
		ev.ExitCode = &n
	}
	seenFinding := map[string]bool{}
	for _, f := range ev.Findings {
		seenFinding[f.String()] = true
	}
	for _, line := range strings.Split(parts["results"], "\n") {
		if line == "" {
			continue
		}
		mac, body, ok := strings.Cut(line, " ")
		if !ok || !r.verify(mac, body) {
			ev.Unsigned++
			continue
		}
		var rec struct {
			T, ID, S, What string
			Exit           int
		}
		if json.Unmarshal([]byte(body), &rec) != nil {
			ev.Unsigned++
			continue
		}
		switch rec.T {
		case "start":
			ev.Ran = true
		case "test":
			ev.Tests = append(ev.Tests, TestOutcome{ID: rec.ID, Status: rec.S})
		case "tamper", "finding":
			f := Finding{Rule: RuleTamper, Action: Refused, Detail: rec.What}
			if rec.T == "finding" {
				fs := parseFindings(rec.What)
				if len(fs) != 1 {
					continue
				}
				f = fs[0]
			}
			if !seenFinding[f.String()] {
				seenFinding[f.String()] = true
				ev.Findings = append(ev.Findings, f)
			}
		case "end":
			ev.Ended, ev.EndExit = true, rec.Exit
		}
	}
	return ev
}

func (r Run) verify(mac, body string) bool {
	want, err := hex.DecodeString(mac)
	if err != nil {
		return false
	}
	h := hmac.New(sha256.New, []byte(r.Key))
	h.Write([]byte(body))
	return hmac.Equal(h.Sum(nil), want)
}

func parseFindings(s string) []Finding {
	var out []Finding
	for _, line := range strings.Split(s, "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 {
			continue
		}
		out = append(out, Finding{Action: Action(f[0]), Rule: f[1], Path: f[2], Detail: f[3]})
	}
	return out
}

// sortFindings orders refusals first, then by rule and path.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Action != fs[j].Action {
			return fs[i].Action == Refused
		}
		if fs[i].Rule != fs[j].Rule {
			return fs[i].Rule < fs[j].Rule
		}
		return fs[i].Path < fs[j].Path
	})
}
