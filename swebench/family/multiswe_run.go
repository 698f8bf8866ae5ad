package family

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// How Multi-SWE-bench's harness runs a row (run_evaluation.py
// run_instance in its default human mode, image.py, and every ported
// class at MultiSWECommit): docker run of the instance image, whose
// WORKDIR is /home/ and which sets no USER (root), with the prediction's
// fix_patch bind-mounted read-write over the image's /home/fix.patch and
// the class's fix_patch_run() as the command; the container's log
// (standard output and error as they come) is fix-patch-run.log, parsed
// whole by the class's parse_log. The exit status is not read and there
// is no timeout. fix-run.sh (set -e) applies /home/test.patch and
// /home/fix.patch in one git apply and runs the tests, so a patch that
// does not apply leaves a log without test results, which the harness
// grades unresolved (Report.check: no test results).
const (
	// MultiSWEHome is the images' working directory, which holds the
	// repository (/home/<repo>) and the class's scripts and patches.
	MultiSWEHome = "/home"
	// MultiSWEFixPatch is Image.fix_patch_path: where the model patch is.
	MultiSWEFixPatch = "/home/fix.patch"
	// MultiSWEFixRun is the ported classes' fix_patch_run().
	MultiSWEFixRun = "bash /home/fix-run.sh"
	// MultiSWEImageMarker is the line the eval script prints, before
	// anything of the model runs, when the image has no /home/fix-run.sh:
	// the image is not one of Multi-SWE-bench's, and the instance is an
	// error ([ErrMultiSWEImage]), not a verdict.
	MultiSWEImageMarker = ">>>>> swebox: the image has no /home/fix-run.sh"
)

// GradingMultiSWE is Multi-SWE-bench's rule: the row's class parses the
// whole fix-run log and [MultiSWEGrade] grades it against the row's run and
// test-patch results and its f2p/p2p/s2p/n2p lists. It needs the row's own
// fields (grade.Input.Extra).
const GradingMultiSWE harness.Grading = "multi-swe-bench"

// ScriptMultiSWE writes eval.sh for a Multi-SWE-bench row: the model patch
// copied from where the evaluator staged it to /home/fix.patch, then the
// class's command, as the harness's docker run does.
const ScriptMultiSWE spec.ScriptStyle = "multi-swe-bench"

// ReasonMultiSWENoTests: the fix run's log gave no test result (a patch
// that did not apply, a build that failed before the tests): Report.check's
// first rule, unresolved.
const ReasonMultiSWENoTests grade.Reason = "multi_swe_no_test_results"

// ErrMultiSWEImage is an instance whose image lacks Multi-SWE-bench's
// layout (/home/fix-run.sh): an infrastructure failure, never the model's.
var ErrMultiSWEImage = errors.New("the image is not laid out as Multi-SWE-bench's instance images are")

// registerMultiSWERun registers the family's rule and script style,
// before the family that names them (multiswe.go's init).
func registerMultiSWERun() {
	grade.RegisterRule(GradingMultiSWE, gradeMultiSWE)
	spec.RegisterScriptStyle(ScriptMultiSWE, multiSWEScript)
}

// MultiSWEProcedure is how the evaluator runs a row of repository repo:
// in /home, a fresh writable volume filled from the image (the root
// filesystem stays read-only), as root (the images set no USER); the
// evaluator applies no patch: it stages the model patch in the
// repository's .git (/home/<repo>/.git/swebox, which git ignores) and the
// eval script puts it at /home/fix.patch and runs fix-run.sh, standard
// error merged into standard output.
func MultiSWEProcedure(repo string) spec.Procedure {
	return spec.Procedure{
		Workdir:            MultiSWEHome,
		ScriptAppliesPatch: true,
		Staging:            MultiSWEHome + "/" + repo + "/.git",
	}
}

// multiSWEScript is eval.sh of a Multi-SWE-bench row.
func multiSWEScript(ts spec.TestSpec, _ spec.ScriptOptions) string {
	staged := ts.Run.StagingDir() + "/swebox/patch.diff"
	return spec.ScriptShebang + "\n" +
		"if [ ! -f /home/fix-run.sh ]; then echo '" + MultiSWEImageMarker + "'; exit 1; fi\n" +
		"cat " + staged + " > " + MultiSWEFixPatch + "\n" +
		"exec " + ts.TestCmd + "\n"
}

// multiSWESpec is a row's test spec: its class's command in its image,
// run by [MultiSWEProcedure] and graded by [GradingMultiSWE]; a row whose
// class is not ported is refused by name ([ErrMultiSWERepo]).
func multiSWESpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	r, err := MultiSWERowOf(inst)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	c, err := MultiSWEClassOf(r)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	// spec.For gives the image name and the options' effects; the row's
	// repository is kept from it, since SWE-bench's own tables (and a
	// user's overrides) know some of the same repositories under other
	// harnesses' commands.
	row := inst
	row.Repo, row.Version, row.EvalScript, row.LogParser, row.EvalType = "", "", "", "", ""
	ts, err := spec.For(row, opts...)
	if err != nil {
		return ts, err
	}
	ts.Repo, ts.Version = inst.Repo, inst.Version
	ts.TestCmd, ts.Directives, ts.TestFiles, ts.Parser = MultiSWEFixRun, nil, nil, ""
	ts.Install, ts.PreInstall, ts.EvalCommands, ts.Python, ts.NanoCPUs, ts.Build = "", nil, nil, "", 0, nil
	ts.Conda, ts.Downloads, ts.ImageAssets = false, nil, spec.ImageAssets{}
	ts.EvalType = dataset.EvalTypePassAndFail
	ts.Script, ts.Grading = ScriptMultiSWE, GradingMultiSWE
	// The harness decodes the container's log as UTF-8 and fails on
	// anything else: v4's decoding, which refuses it too.
	ts.Rules = harness.V4
	ts.FailToPass = append([]string{}, inst.FailToPass...)
	ts.PassToPass = append([]string{}, inst.PassToPass...)
	ts.Source = spec.SourceRow
	ts.Run = MultiSWEProcedure(r.Repo)
	ts.Notes = append(ts.Notes[:0:0],
		fmt.Sprintf("Multi-SWE-bench instance class %s/%s (%s) at %s", c.Org, c.Repo, c.Language, MultiSWECommit[:7]),
		"run as Multi-SWE-bench's harness runs it: root in /home, the model patch at "+MultiSWEFixPatch+", \""+MultiSWEFixRun+"\", its whole log parsed by the class's parse_log")
	return ts, nil
}

// gradeMultiSWE is Grade under [GradingMultiSWE]. The report's
// FAIL_TO_PASS lists the row's f2p, s2p and n2p tests and PASS_TO_PASS its
// p2p tests, each a success when it passes with the fix and had the same
// status with the test patch alone (the kind the harness's report gives it
// once Report.check finds the report valid); resolved is the harness's
// verdict. patch_successfully_applied says the fix run gave test results.
// An error is where the harness records the instance as an error: a
// parse_log that raises, a row it cannot read, an image without its layout.
func gradeMultiSWE(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, in.Rules.OrDefault(), GradingMultiSWE)
	if done {
		return rep, nil
	}
	text := grade.UniversalNewlines(in.Log)
	if first, _, _ := strings.Cut(text, "\n"); first == MultiSWEImageMarker {
		return rep, fmt.Errorf("grade %s: %w: /home/fix-run.sh is missing", in.InstanceID, ErrMultiSWEImage)
	}
	row, err := MultiSWERowOf(dataset.Instance{InstanceID: in.InstanceID, Repo: in.Repo, Extra: in.Extra})
	if err != nil {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, err)
	}
	v, fix, err := MultiSWEGradeLog(row, text)
	if err != nil {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, err)
	}
	rep.StatusMap = logparse.StatusMap{}
	for _, l := range []struct {
		tests []string
		st    logparse.Status
	}{{fix.Skipped, logparse.SKIPPED}, {fix.Failed, logparse.FAILED}, {fix.Passed, logparse.PASSED}} {
		for _, t := range l.tests {
			rep.StatusMap[t] = l.st
		}
	}
	if v.Reason == MultiSWENoTests {
		rep.Evaluation.Reason = ReasonMultiSWENoTests
		return rep, nil
	}
	rep.PatchSuccessfullyApplied, rep.Evaluation.Usable, rep.Evaluation.WholeLog = true, true, true
	kinds := multiSWEKinds(row.TestResult.statuses(), fix.statuses())
	ts := grade.NewTestsStatus()
	for _, k := range []struct {
		row  []string
		kind string
		into *grade.Results
	}{{row.F2P, "f2p", &ts.FailToPass}, {row.S2P, "s2p", &ts.FailToPass}, {row.N2P, "n2p", &ts.FailToPass}, {row.P2P, "p2p", &ts.PassToPass}} {
		for _, t := range k.row {
			if kinds[k.kind][t] {
				k.into.Success = append(k.into.Success, t)
			} else {
				k.into.Failure = append(k.into.Failure, t)
			}
		}
	}
	rep.TestsStatus, rep.Resolved = &ts, v.Resolved
	return rep, nil
}
