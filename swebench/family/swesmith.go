package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-smith (SWE-bench/SWE-smith): synthetic bugs in Python repositories.
// A row is one bug: its patch introduces the bug, FAIL_TO_PASS and
// PASS_TO_PASS are the tests it breaks and keeps, image_name is the
// repository's image (jyangballin/swesmith.x86_64.<owner>_1776_<repo>.<commit8>)
// and the bugged code is the branch named by the instance id of the
// mirror repository swesmith/<owner>__<repo>.<commit8> (the row's repo).
// Its harness (swesmith.harness.eval) runs `git fetch; git checkout
// <base_commit>` in the container, applies the prediction with
// GIT_APPLY_CMDS (the gold one, the bug patch, with --reverse), runs the
// profile's test command between markers and grades by its own rule
// ([GradingSmith]).
//
// swebox never opens the sandbox's network for the checkout: the host
// checks the revision out of the mirror (Config.RepoSources, eval --repos
// DIR with DIR/swesmith/<owner>__<repo>.<commit8>, else the mirror cloned
// from GitHub into the repository cache) and copies it into /testbed
// (Family.HostCheckout). A row without base_commit checks out its
// instance branch, whose head gather.py records as base_commit. The row's
// patch becomes the bug patch reversed ([ReversePatch]), so that gold
// predictions are the fix; the bug patch stays under bug_patch.
//
// Only the profiles whose test command runs pytest are ported
// ([SmithProfileOf]); a row of any other profile is refused by name
// ([ErrSmithRepo]).
func init() {
	grade.RegisterRule(GradingSmith, gradeSmith)
	spec.RegisterScriptStyle(ScriptSmith, smithScript)
	dataset.RegisterRowMapper(mapSmithRow)
	Register(&Family{
		Name:     "swe-smith",
		Aliases:  []string{"swesmith"},
		Title:    "SWE-smith",
		Datasets: []Dataset{{ID: "SWE-bench/SWE-smith", Splits: []string{"train"}}},
		Upstream: Upstream{Repository: "SWE-bench/SWE-smith", Commit: SmithCommit},
		Claim: func(inst dataset.Instance) Claim {
			if isSmithRow(inst) {
				return ClaimRow
			}
			return ClaimNone
		},
		Namespace:    SmithNamespace,
		Image:        SmithImage,
		Spec:         smithSpec,
		Grading:      GradingSmith,
		Rules:        harness.V4,
		HostCheckout: true,
	})
}

const (
	// SmithCommit is the commit of SWE-bench/SWE-smith whose harness,
	// profiles and log parsers were ported and compared with; its
	// swebench dependency was SWE-bench 4.0.1.
	SmithCommit = "c5b45e5623b8ddcdc5740b6679343f87f33940a2"
	// SmithNamespace is the harness's ORG_NAME_DH, where its images are.
	SmithNamespace = "jyangballin"
	// SmithMirrorOwner is the harness's ORG_NAME_GH, the owner of the
	// mirror repositories.
	SmithMirrorOwner = "swesmith"
	// GradingSmith is SWE-smith's grading rule (swesmith/harness/grading.py
	// get_eval_report): see [SmithGrade].
	GradingSmith harness.Grading = "swe-smith"
	// ScriptSmith is the eval.sh run_patch_in_container writes.
	ScriptSmith spec.ScriptStyle = "swe-smith"
)

var (
	// ErrSmithRepo is a SWE-smith row of a repository profile swebox has
	// not ported (one whose test command is not pytest's, or one not in
	// the harness's registry at [SmithCommit]).
	ErrSmithRepo = errors.New("SWE-smith repository profile not ported")
	// ErrSmithRow is a SWE-smith row that cannot be read.
	ErrSmithRow = errors.New("malformed SWE-smith row")
)

// SmithApplyCommands is the harness's GIT_APPLY_CMDS, run as root in
// /testbed, each with the patch's path appended; the first to exit 0 wins.
var SmithApplyCommands = [][]string{
	{"git", "apply", "--verbose"},
	{"git", "apply", "--verbose", "--reject"},
	{"patch", "--batch", "--fuzz=5", "-p1", "-i"},
}

// SmithProfile is what swebox keeps of a repository profile.
type SmithProfile struct {
	Owner, Repo, Commit string
	TestCmd             string
}

// Name is the profile's repo_name, <owner>__<repo>.<commit[:8]>: the
// mirror repository's name and the prefix of its instance ids.
func (p SmithProfile) Name() string { return p.Owner + "__" + p.Repo + "." + p.Commit[:8] }

// Image is the profile's image_name: jyangballin/swesmith.x86_64.
// <owner>_1776_<repo>.<commit[:8]>, lower case.
func (p SmithProfile) Image() string {
	return strings.ToLower(SmithNamespace + "/swesmith.x86_64." + p.Owner + harness.ImageUnderscores + p.Repo + "." + p.Commit[:8])
}

// smithProfileKey is the registry key of an instance id
// (Registry.get_from_inst): everything before its last ".".
func smithProfileKey(instanceID string) string {
	if i := strings.LastIndex(instanceID, "."); i >= 0 {
		return instanceID[:i]
	}
	return instanceID
}

// SmithProfileOf is the ported profile of an instance id.
func SmithProfileOf(instanceID string) (SmithProfile, error) {
	key := smithProfileKey(instanceID)
	p, ok := smithProfiles[key]
	if !ok {
		return SmithProfile{}, fmt.Errorf("%w: %q (instance %s): swebox ports the %d profiles whose test command runs pytest", ErrSmithRepo, key, instanceID, len(smithProfiles))
	}
	return p, nil
}

// SmithImage is the image of the profile an instance id names, under
// namespace (default [SmithNamespace]); tag is ignored, as the harness
// names no tag.
func SmithImage(instanceID, namespace, _ string) string {
	p, err := SmithProfileOf(instanceID)
	if err != nil {
		return ""
	}
	name := p.Image()
	if namespace != "" && namespace != SmithNamespace {
		name = namespace + strings.TrimPrefix(name, SmithNamespace)
	}
	return name
}

// isSmithRow: the row names its image as SWE-smith's rows do and its
// repository is a SWE-smith mirror.
func isSmithRow(inst dataset.Instance) bool {
	_, img := inst.Extra["image_name"]
	return img && strings.HasPrefix(inst.Repo, SmithMirrorOwner+"/")
}

// mapSmithRow maps a SWE-smith row: patch becomes the bug patch reversed
// (the fix, what gold predictions apply), bug_patch keeps the row's
// patch, and a row without base_commit gets base_ref, its instance branch.
// A row that has bug_patch is mapped already.
func mapSmithRow(fields map[string]json.RawMessage) (map[string]json.RawMessage, bool, error) {
	if _, ok := fields["image_name"]; !ok {
		return nil, false, nil
	}
	if _, ok := fields["bug_patch"]; ok {
		return nil, false, nil
	}
	var repo string
	if json.Unmarshal(fields["repo"], &repo) != nil || !strings.HasPrefix(repo, SmithMirrorOwner+"/") {
		return nil, false, nil
	}
	var id, bug string
	if err := json.Unmarshal(fields["instance_id"], &id); err != nil || id == "" {
		return nil, true, fmt.Errorf("%w: instance_id is missing or not a string", ErrSmithRow)
	}
	if err := json.Unmarshal(fields["patch"], &bug); err != nil || strings.TrimSpace(bug) == "" {
		return nil, true, fmt.Errorf("%w: patch (the bug) is missing or not a string", ErrSmithRow)
	}
	fix, err := ReversePatch(bug)
	if err != nil {
		return nil, true, fmt.Errorf("%w: patch: %v", ErrSmithRow, err)
	}
	out := make(map[string]json.RawMessage, len(fields)+2)
	for k, v := range fields {
		out[k] = v
	}
	put := func(k string, v any) {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	put("bug_patch", bug)
	put("patch", fix)
	if s, _ := fields["base_commit"]; len(s) == 0 || string(s) == "null" || string(s) == `""` {
		delete(out, "base_commit")
		put("base_ref", id)
	}
	return out, true, nil
}

// SmithTestCommand is get_test_command for an evaluation row of profile
// p: the profile's command followed by the FAIL_TO_PASS files (the
// harness lists them through a Python set, in hash order; here sorted),
// which it returns as the files graded; for python/mypy the command
// selects the FAIL_TO_PASS cases by name with -k and no file filters
// the grading.
func SmithTestCommand(p SmithProfile, failToPass []string) (cmd string, files []string) {
	if p.Owner+"/"+p.Repo == "python/mypy" {
		keys := make([]string, len(failToPass))
		for i, t := range failToPass {
			keys[i] = t
			if j := strings.LastIndex(t, "::"); j >= 0 {
				keys[i] = t[j+len("::"):]
			}
		}
		return p.TestCmd + ` "` + strings.Join(keys, " or ") + `"`, nil
	}
	seen := map[string]bool{}
	for _, t := range failToPass {
		f, _, _ := strings.Cut(t, "::")
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files)
	if files == nil {
		files = []string{}
	}
	return p.TestCmd + " " + strings.Join(files, " "), files
}

// SmithScript is the eval.sh run_patch_in_container writes for a test
// command.
func SmithScript(testCommand string) string {
	return strings.Join([]string{
		"#!/bin/bash",
		"set -uxo pipefail",
		"source /opt/miniconda3/bin/activate",
		"conda activate testbed",
		"cd " + harness.RepoDir,
		": '" + harness.StartTestOutput + "'",
		testCommand,
		": '" + harness.EndTestOutput + "'",
	}, "\n") + "\n"
}

// smithScript writes the harness's script whatever the options: it has
// no install step and records no exit code.
func smithScript(ts spec.TestSpec, _ spec.ScriptOptions) string { return SmithScript(ts.TestCommand()) }

// smithSpec is the row's test spec: its profile's test command with the
// FAIL_TO_PASS files, the harness's script, image, patch commands and
// grading, and the host checkout of the row's revision.
func smithSpec(inst dataset.Instance, _ ...spec.Option) (spec.TestSpec, error) {
	p, err := SmithProfileOf(inst.InstanceID)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	// Built here rather than by spec.For: nothing of the official tables
	// applies, and a row may name a branch instead of a commit.
	cmd, _ := SmithTestCommand(p, inst.FailToPass)
	ts := spec.TestSpec{
		InstanceID: inst.InstanceID, Repo: inst.Repo, Version: inst.Version, BaseCommit: inst.BaseCommit,
		TestCmd: cmd, Parser: harness.ParserPytest, EvalType: dataset.EvalTypePassAndFail,
		Grading: GradingSmith, Rules: harness.V4, Script: ScriptSmith,
	}
	ts.Image = p.Image()
	var img string
	if json.Unmarshal(inst.Extra["image_name"], &img) == nil && img != "" {
		ts.Image = img
	}
	ts.Run = spec.Procedure{PatchCommands: SmithApplyCommands}
	ts.Source = spec.SourceRow
	ts.Notes = append(ts.Notes,
		"test command from SWE-smith's profile "+p.Name()+"; parser "+smithParserName(p.Owner+"/"+p.Repo)+"; graded by SWE-smith's rule",
		"repository: "+inst.Repo+" at "+inst.Revision()+", checked out on the host and copied into "+harness.RepoDir+" (SWE-smith's harness fetches it in the container)")
	return ts, nil
}

// smithParsers is the harness's MAP_REPO_TO_PARSER for the ported
// profiles' repositories (owner/repo); any other repository is parsed by
// parse_log_pytest.
var smithParsers = map[string]func(string) logparse.StatusMap{
	"HIPS/autograd":     smithParseAutograd,
	"paramiko/paramiko": smithParseParamiko,
	"python/mypy":       smithParseMypy,
}

func smithParserName(repo string) string {
	switch repo {
	case "HIPS/autograd":
		return "parse_log_autograd"
	case "paramiko/paramiko":
		return "parse_log_paramiko"
	case "python/mypy":
		return "parse_log_mypy"
	}
	return "parse_log_pytest"
}

// SmithParse parses a log as the harness's parser of the repository an
// instance id names (its part before the first ".", "__" read as "/").
func SmithParse(instanceID, log string) logparse.StatusMap {
	repo, _, _ := strings.Cut(instanceID, ".")
	repo = strings.ReplaceAll(repo, "__", "/")
	if fn := smithParsers[repo]; fn != nil {
		return fn(log)
	}
	return smithParsePytest(log)
}

// smithStatuses is swebench's TestStatus in its order.
var smithStatuses = []logparse.Status{logparse.FAILED, logparse.PASSED, logparse.SKIPPED, logparse.ERROR, logparse.XFAIL}

// The parsers' patterns per status, compiled once; \S and \s as Python's
// re reads them on str.
var (
	smithPytestRE   = smithStatusREs(`^([^` + pyS + `]+)([` + pyS + `]+)%s`)
	smithParamikoRE = smithStatusREs(`^%s[` + pyS + `]([^` + pyS + `]+)`)
	smithAutogradRE = smithStatusREs(`^\[gw[` + pyD + `]\][` + pyS + `]%s[` + pyS + `]([^` + pyS + `]+)`)
)

func smithStatusREs(format string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(smithStatuses))
	for i, s := range smithStatuses {
		out[i] = regexp.MustCompile(fmt.Sprintf(format, regexp.QuoteMeta(string(s))))
	}
	return out
}

// smithMatchEach is the harness's loop over the lines and, per line, over
// TestStatus: every status whose pattern matches sets the test's status
// (a later status wins), the test name being the pattern's group.
func smithMatchEach(log string, res []*regexp.Regexp, group int) logparse.StatusMap {
	sm := logparse.StatusMap{}
	for _, line := range strings.Split(log, "\n") {
		for i, re := range res {
			if m := re.FindStringSubmatch(line); m != nil {
				sm[m[group]] = smithStatuses[i]
			}
		}
	}
	return sm
}

// smithParsePytest is parse_log_pytest: ^(\S+)(\s+)STATUS.
func smithParsePytest(log string) logparse.StatusMap { return smithMatchEach(log, smithPytestRE, 1) }

// smithParseParamiko is parse_log_paramiko: ^STATUS\s(\S+).
func smithParseParamiko(log string) logparse.StatusMap {
	return smithMatchEach(log, smithParamikoRE, 1)
}

// smithParseAutograd is parse_log_autograd: ^\[gw\d\]\sSTATUS\s(\S+).
func smithParseAutograd(log string) logparse.StatusMap {
	return smithMatchEach(log, smithAutogradRE, 1)
}

// smithParseMypy is parse_log_mypy: a line containing PASSED (else
// FAILED) anywhere gives that status to its last whitespace-separated
// word.
func smithParseMypy(log string) logparse.StatusMap {
	sm := logparse.StatusMap{}
	for _, line := range strings.Split(log, "\n") {
		for _, s := range []logparse.Status{logparse.PASSED, logparse.FAILED} {
			if strings.Contains(line, string(s)) {
				if f := pySplit(line); len(f) > 0 {
					sm[f[len(f)-1]] = s
				} else {
					// Python's line.split()[-1] on a line of only
					// whitespace raises IndexError; a line containing
					// a status word is never one.
					continue
				}
				break
			}
		}
	}
	return sm
}

// pySplit is Python's str.split() with no argument.
func pySplit(s string) []string {
	return strings.FieldsFunc(s, isPySpace)
}

func isPySpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// Markers of the harness's read_test_output: SWE-bench's APPLY_PATCH_FAIL
// and TESTS_TIMEOUT anywhere make the log unusable; the test output is
// what lies between the set -x traces of the start and end markers.
const (
	smithApplyFail = harness.PatchApplyFailMarker
	smithTimeout   = harness.TestsTimedOutMarker
)

// smithReadTestOutput is read_test_output: the text between the traced
// markers and whether it was found; an error when the end marker comes
// before the start marker (the harness raises ValueError).
func smithReadTestOutput(content string) (string, bool, error) {
	if strings.Contains(content, smithApplyFail) || strings.Contains(content, smithTimeout) {
		return "", false, nil
	}
	if !strings.Contains(content, harness.StartTestOutput) || !strings.Contains(content, harness.EndTestOutput) {
		return content, false, nil
	}
	startSep, endSep := "+ : '"+harness.StartTestOutput+"'", "+ : '"+harness.EndTestOutput+"'"
	start, end := strings.Index(content, startSep), strings.Index(content, endSep)
	if start > end {
		return "", false, errors.New("start and end markers are not in correct order")
	}
	if start < 0 {
		// content[-1:end][len(start_sep):] in Python: empty, as end lies
		// before the last character.
		return "", true, nil
	}
	if end < start+len(startSep) {
		return "", true, nil
	}
	return content[start+len(startSep) : end], true, nil
}

// SmithGrade is the harness's get_eval_report on a test log: the log
// parsed by the repository's parser; FAIL_TO_PASS and PASS_TO_PASS kept
// to the tests under the files the test command named (all of them for
// python/mypy); a test passes when its status is PASSED or XFAIL or when
// the log does not list it at all (the harness assumes a test it did not
// run passed), fails when FAILED or ERROR, and counts for neither when
// SKIPPED; resolved when no FAIL_TO_PASS and no PASS_TO_PASS test fails.
// A log with SWE-bench's patch-apply-failure or timeout marker, or
// without the markers, is graded unresolved with no test results. The
// report never says patch_successfully_applied, as the harness's never
// does.
func SmithGrade(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, harness.V4, GradingSmith)
	if done {
		return rep, nil
	}
	p, err := SmithProfileOf(in.InstanceID)
	if err != nil {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, err)
	}
	// The harness reads the log with Path.read_text: universal newlines.
	text, found, err := smithReadTestOutput(grade.UniversalNewlines(in.Log))
	if err != nil {
		// The harness raises and writes no report: the instance is
		// unresolved.
		rep.Evaluation.Reason = grade.ReasonMissingMarkers
		return rep, nil
	}
	if !found {
		rep.Evaluation.Reason = grade.ReasonMissingMarkers
		return rep, nil
	}
	sm := SmithParse(in.InstanceID, text)
	rep.StatusMap = sm
	rep.Evaluation.Usable = true
	_, files := SmithTestCommand(p, in.FailToPass)
	relevant := func(tests []string) []string {
		if len(files) == 0 {
			return tests
		}
		var out []string
		for _, t := range tests {
			for _, f := range files {
				if strings.HasPrefix(t, f) {
					out = append(out, t)
					break
				}
			}
		}
		return out
	}
	ts := grade.NewTestsStatus()
	judge := func(tests []string, r *grade.Results) {
		for _, t := range tests {
			s, listed := sm[t]
			switch {
			case !listed || s == logparse.PASSED || s == logparse.XFAIL:
				r.Success = append(r.Success, t)
			case s == logparse.FAILED || s == logparse.ERROR:
				r.Failure = append(r.Failure, t)
			}
		}
	}
	judge(relevant(in.FailToPass), &ts.FailToPass)
	judge(relevant(in.PassToPass), &ts.PassToPass)
	rep.TestsStatus = &ts
	rep.Resolved = len(ts.FailToPass.Failure) == 0 && len(ts.PassToPass.Failure) == 0
	return rep, nil
}

func gradeSmith(in grade.Input) (grade.InstanceReport, error) { return SmithGrade(in) }
