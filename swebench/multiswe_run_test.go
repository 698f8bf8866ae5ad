package swebench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
)

// autotoolsImage is the test image with autoconf, automake and make, which
// the fix-run.sh of Multi-SWE-bench's jqlang/jq class runs
// (SWEBOX_IMAGE_EXTRA=autoconf,automake,make scripts/build-image.sh
// swebox/autotools:bookworm; .ci/run builds it).
const autotoolsImage = "swebox/autotools:bookworm"

// The stand-in for jqlang/jq: an automake project whose tests are shell
// scripts, so that the class's fix-run.sh (autoreconf -i, ./configure
// --with-oniguruma=builtin, make clean, make -j8, make check) runs it as it
// runs jq, and make check prints the "PASS: tests/x.test" lines the class's
// parse_log reads. add is wrong at the base commit; the test patch adds its
// test; the gold patch fixes it.
var multiSWEJqFiles = map[string]string{
	"configure.ac":   "AC_INIT([jq], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n",
	"Makefile.am":    "TEST_EXTENSIONS = .test\nTEST_LOG_COMPILER = $(SHELL)\nTESTS = tests/mul.test\nEXTRA_DIST = src/calc.sh $(TESTS)\n",
	"src/calc.sh":    "add() { echo $(($1 - $2)); }\nmul() { echo $(($1 * $2)); }\n",
	"tests/mul.test": ". \"$srcdir/src/calc.sh\"\ntest \"$(mul 3 4)\" = 12\n",
	"README":         "jq stand-in\n",
}

// multiSWEGit runs git in dir.
func multiSWEGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=swebox", "-c", "user.email=test@swebox.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// multiSWEDiff is the diff that edits (path to new content) make to the
// repository in dir, which is left as it was.
func multiSWEDiff(t *testing.T, dir string, edits map[string]string) string {
	t.Helper()
	for p, content := range edits {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	multiSWEGit(t, dir, "add", "-A")
	diff := multiSWEGit(t, dir, "diff", "--cached", "--no-color")
	multiSWEGit(t, dir, "reset", "-q", "--hard")
	require.NotEmpty(t, diff)
	return diff
}

// multiSWEJqRow is a Multi-SWE-bench row of jqlang/jq in the dataset's own
// schema: the run before the test patch passes mul, the run with it fails
// add; add is f2p and mul p2p.
func multiSWEJqRow(t *testing.T, number int, base, fix, test string) dataset.Instance {
	t.Helper()
	res := func(passed, failed []string) map[string]any {
		return map[string]any{"passed_count": len(passed), "failed_count": len(failed), "skipped_count": 0,
			"passed_tests": passed, "failed_tests": failed, "skipped_tests": []string{}}
	}
	row := map[string]any{
		"org": "jqlang", "repo": "jq", "number": number, "state": "closed", "title": "add adds", "body": "",
		"base":      map[string]string{"label": "jqlang:master", "ref": "master", "sha": base},
		"fix_patch": fix, "test_patch": test,
		"f2p_tests":         map[string]any{"tests/add.test": map[string]string{"run": "NONE", "test": "FAIL", "fix": "PASS"}},
		"p2p_tests":         map[string]any{"tests/mul.test": map[string]string{"run": "PASS", "test": "PASS", "fix": "PASS"}},
		"s2p_tests":         map[string]any{},
		"n2p_tests":         map[string]any{},
		"run_result":        res([]string{"tests/mul.test"}, []string{}),
		"test_patch_result": res([]string{"tests/mul.test"}, []string{"tests/add.test"}),
	}
	b, err := json.Marshal(row)
	require.NoError(t, err)
	var in dataset.Instance
	require.NoError(t, json.Unmarshal(b, &in))
	return in
}

// A Multi-SWE-bench row runs end to end as its harness runs it, in a
// stand-in for its instance image laid out as the jqlang/jq class's
// Dockerfile lays it out (WORKDIR /home/, no USER, the repository at
// /home/jq at the base commit, the row's fix.patch and test.patch and the
// class's fix-run.sh in /home): the model patch at /home/fix.patch, "bash
// /home/fix-run.sh" as root in /home, the whole log parsed by the class's
// parse_log and graded by the harness's Report.check and its membership
// test. The gold patch resolves; a patch that fixes nothing does not
// (nothing-fixed); a patch that does not apply stops fix-run.sh (set -e)
// before the tests, and a log without test results is unresolved, as the
// harness grades it; a patch that crashes the test process (SIGSEGV) is
// the FAIL automake reports, unresolved; a patch that breaks the build is
// a log without test results, unresolved. An image without
// /home/fix-run.sh is an error instance, not the model's failure. A fix
// run that a failed fetch from GitHub stops (the harness's container has
// the network, the sandbox none) is needs_network, no verdict; a fix that
// resolves despite the failed fetch stays resolved.
func TestMultiSWERunsAsItsHarness(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	if ok, err := c.HasImage(ctx, autotoolsImage); err != nil || !ok {
		cienv.Skip(t, "no %s image (%v); build it with SWEBOX_IMAGE_EXTRA=autoconf,automake,make scripts/build-image.sh %s", autotoolsImage, err, autotoolsImage)
	}
	src := t.TempDir()
	repoDir := filepath.Join(src, "jq")
	for p, content := range multiSWEJqFiles {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repoDir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repoDir, p), []byte(content), 0o644))
	}
	multiSWEGit(t, repoDir, "init", "-q", "-b", "master")
	multiSWEGit(t, repoDir, "add", "-A")
	multiSWEGit(t, repoDir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(multiSWEGit(t, repoDir, "rev-parse", "HEAD"))

	testPatch := multiSWEDiff(t, repoDir, map[string]string{
		"Makefile.am":    strings.Replace(multiSWEJqFiles["Makefile.am"], "TESTS = tests/mul.test", "TESTS = tests/add.test tests/mul.test", 1),
		"tests/add.test": ". \"$srcdir/src/calc.sh\"\ntest \"$(add 2 3)\" = 5\n",
	})
	calc := func(add string) map[string]string {
		return map[string]string{"src/calc.sh": "add() { " + add + "; }\nmul() { echo $(($1 * $2)); }\n"}
	}
	gold := multiSWEDiff(t, repoDir, calc("echo $(($1 + $2))"))
	noop := multiSWEDiff(t, repoDir, map[string]string{"README": "jq stand-in, a calculator\n"})
	crash := multiSWEDiff(t, repoDir, calc("kill -SEGV $$"))
	buildBreak := multiSWEDiff(t, repoDir, map[string]string{"configure.ac": "AC_INIT([jq], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_CONFIG_FILES([Makefile])\nAC_NO_SUCH_MACRO_([x])\nAC_OUTPUT\n"})
	// configure prints, from inside the sandbox, the user, the effective
	// capabilities and the network interfaces.
	probe := multiSWEDiff(t, repoDir, map[string]string{"configure.ac": "AC_INIT([jq], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_CONFIG_FILES([Makefile])\n" +
		"echo \"PROBE uid=$(id -u) caps=$(sed -n 's/^CapEff:\\t//p' /proc/self/status) net=$(ls /sys/class/net | tr '\\n' ' ')\"\nAC_OUTPUT\n"})
	// configure tries to fetch from GitHub, which the harness's container
	// reaches and the sandbox does not: stopping the build there is no
	// verdict; going on, with the fix, still resolves.
	fetch := func(onFailure string) string {
		edits := calc("echo $(($1 + $2))")
		edits["configure.ac"] = "AC_INIT([jq], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_CONFIG_FILES([Makefile])\n" +
			"git ls-remote https://github.com/jqlang/jq >/dev/null || " + onFailure + "\nAC_OUTPUT\n"
		return multiSWEDiff(t, repoDir, edits)
	}
	fetchStops, fetchGoesOn := fetch("exit 1"), fetch("echo 'no network, going on'")
	broken := "diff --git a/src/nothere.c b/src/nothere.c\n--- a/src/nothere.c\n+++ b/src/nothere.c\n@@ -1,2 +1,2 @@\n-int x = 1;\n+int x = 2;\n int y = 3;\n"

	row := multiSWEJqRow(t, 4242, base, gold, testPatch)
	noLayout := multiSWEJqRow(t, 4243, base, gold, testPatch)
	fam, _, err := family.Resolve(row, family.Hint{})
	require.NoError(t, err)
	require.NotNil(t, fam)
	require.Equal(t, "multi-swe-bench", fam.Name)
	r, err := family.MultiSWERowOf(row)
	require.NoError(t, err)
	class, err := family.MultiSWEClassOf(r)
	require.NoError(t, err)

	// The instance image, as the class's ImageDefault builds it over its
	// base: its files copied to /home, the repository at the base commit.
	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	image := fam.ImageName(row, ns, "")
	require.Equal(t, ns+"/jqlang_m_jq:pr-4242", image)
	ctxDir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(ctxDir, "jq"), os.DirFS(repoDir)))
	for name, content := range map[string]string{"fix.patch": gold, "test.patch": testPatch, "fix-run.sh": class.FixRunScript(r)} {
		require.NoError(t, os.WriteFile(filepath.Join(ctxDir, name), []byte(content), 0o644))
	}
	swebenchtest.BuildImage(t, c, ctxDir, "", "FROM "+autotoolsImage+"\nWORKDIR /home/\nCOPY jq /home/jq\nCOPY fix.patch test.patch fix-run.sh /home/\n", image)
	swebenchtest.BuildImage(t, c, t.TempDir(), "", "FROM "+image+"\nRUN rm /home/fix-run.sh\n", fam.ImageName(noLayout, ns, ""))

	cfg := swebench.Config{
		Dataset: []dataset.Instance{row, noLayout}, Namespace: ns, Sandboxes: []*sandbox.Client{c},
		LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
		Timeout: 5 * time.Minute, MaxWorkers: 1, Limits: testenv.SmallLimits, TestOutputLimit: 1 << 20,
	}

	// The sandbox's spec: /home its working directory, root (the images
	// set no USER), no network, no capabilities added. The probe case
	// below shows the same from inside.
	t.Run("sandbox", func(t *testing.T) {
		cfg := cfg
		cfg.RunID = "msb-sandbox"
		cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(row.InstanceID, gold)}
		p, err := swebench.Prepare(ctx, cfg)
		require.NoError(t, err)
		defer p.Close()
		tb, err := p.Testbed(row.InstanceID)
		require.NoError(t, err)
		assert.Equal(t, "/home", tb.Workdir)
		assert.Equal(t, "/home", tb.Spec.WorkingDir)
		assert.Equal(t, "0:0", tb.Spec.User)
		assert.True(t, tb.Spec.Relax.Root)
		assert.Empty(t, tb.Spec.Relax.Network)
		assert.Empty(t, tb.Spec.Relax.CapAdd)
	})

	// evaluate runs row with patch under runID: its one result, the
	// outcomes and its test_output.txt.
	evaluate := func(t *testing.T, runID, patch string) (swebench.InstanceResult, map[string]swebench.Outcome, string) {
		t.Helper()
		cfg := cfg
		cfg.RunID = runID
		cfg.InstanceIDs = []string{row.InstanceID}
		cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(row.InstanceID, patch)}
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		require.Len(t, res.Instances, 1)
		return res.Instances[0], res.Outcomes, swebenchtest.ReadFile(t, cfg, row.InstanceID, "test_output.txt")
	}

	for _, tc := range []struct {
		name, patch string
		status      swebench.Status
		usable      bool   // the fix run gave test results
		logHas      string // a line of the fix run's log
	}{
		{"gold", gold, swebench.StatusResolved, true, "PASS: tests/add.test"},
		{"no-op", noop, swebench.StatusUnresolved, true, "FAIL: tests/add.test"},
		{"does-not-apply", broken, swebench.StatusUnresolved, false, "error: src/nothere.c: No such file or directory"},
		{"test-crash", crash, swebench.StatusUnresolved, true, "FAIL: tests/add.test"},
		{"build-break", buildBreak, swebench.StatusUnresolved, false, "AC_NO_SUCH_MACRO_"},
		{"probe", probe, swebench.StatusUnresolved, true, "PROBE uid=0 caps=0000000000000000 net=lo \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, log := evaluate(t, "msb-"+tc.name, tc.patch)
			require.Equal(t, tc.status, got.Status, "%s\n%s", got.Error, log)
			require.NotNil(t, got.Report)
			assert.Equal(t, family.GradingMultiSWE, got.Report.Notes.Grading)
			assert.Equal(t, tc.usable, got.Report.PatchSuccessfullyApplied)
			assert.Contains(t, log, tc.logHas)
			assert.Empty(t, got.PatchAttempts, "the evaluator applies nothing: fix-run.sh does")
			// fix-run.sh's trace is not in the log: set -e, not set -x.
			assert.NotContains(t, log, "+ git apply")
			run := cfg
			run.RunID = "msb-" + tc.name
			script := swebenchtest.ReadFile(t, run, row.InstanceID, "eval.sh")
			assert.Equal(t, "#!/bin/bash\nif [ ! -f /home/fix-run.sh ]; then echo '"+family.MultiSWEImageMarker+"'; exit 1; fi\n"+
				"cat /home/jq/.git/swebox/patch.diff > /home/fix.patch\nexec bash /home/fix-run.sh\n", script)
			if !tc.usable {
				assert.Equal(t, family.ReasonMultiSWENoTests, got.Report.Evaluation.Reason)
				assert.Nil(t, got.Report.TestsStatus)
				assert.NotContains(t, log, "PASS: tests/mul.test", "fix-run.sh stopped before the tests")
				return
			}
			require.NotNil(t, got.Report.TestsStatus)
			assert.Contains(t, log, "PASS: tests/mul.test")
			if tc.status == swebench.StatusResolved {
				assert.Equal(t, swebench.Fraction{Passed: 1, Total: 1}, got.FailToPass)
			} else {
				assert.Equal(t, swebench.Fraction{Passed: 0, Total: 1}, got.FailToPass)
			}
			assert.Equal(t, swebench.Fraction{Passed: 1, Total: 1}, got.PassToPass)
		})
	}

	t.Run("image-without-layout", func(t *testing.T) {
		cfg := cfg
		cfg.RunID = "msb-no-layout"
		cfg.InstanceIDs = []string{noLayout.InstanceID}
		cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(noLayout.InstanceID, gold)}
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		require.Len(t, res.Instances, 1)
		got := res.Instances[0]
		assert.Equal(t, swebench.StatusError, got.Status)
		assert.True(t, errors.Is(got.Err, family.ErrMultiSWEImage), fmt.Sprint(got.Err))
		assert.Nil(t, got.Report)
	})
	// A fix run that fails after a failed network attempt is an error
	// instance, needs_network, with no report.json; one that resolves
	// despite the attempt stays resolved.
	t.Run("needs-network", func(t *testing.T) {
		for _, tc := range []struct {
			name, patch string
			outcome     swebench.Outcome
		}{
			{"stops", fetchStops, swebench.OutcomeNeedsNetwork},
			{"goes-on", fetchGoesOn, swebench.OutcomeResolved},
		} {
			got, outcomes, log := evaluate(t, "msb-network-"+tc.name, tc.patch)
			assert.Contains(t, log, "fatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com", tc.name)
			require.Equal(t, tc.outcome, got.Outcome, "%s: %s\n%s", tc.name, got.Error, log)
			assert.Equal(t, tc.outcome, outcomes[row.InstanceID], tc.name)
			if tc.outcome == swebench.OutcomeResolved {
				assert.Equal(t, swebench.StatusResolved, got.Status)
				continue
			}
			assert.Equal(t, swebench.StatusError, got.Status)
			assert.True(t, got.Outcome.Infrastructure())
			assert.Nil(t, got.Report)
			var nn *swebench.NeedsNetworkError
			require.True(t, errors.As(got.Err, &nn), fmt.Sprint(got.Err))
			assert.True(t, errors.Is(got.Err, swebench.ErrNeedsNetwork))
			assert.Equal(t, "Multi-SWE-bench", nn.Family)
			assert.Equal(t, "test_output.txt", nn.Log)
			assert.Equal(t, "fatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com", nn.Text)
			assert.Equal(t, "fatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com", strings.Split(log, "\n")[nn.Line-1])
			_, statErr := os.Stat(filepath.Join(got.LogDir, "report.json"))
			assert.True(t, os.IsNotExist(statErr), "no report.json: %v", statErr)
		}
	})
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}

// GradeLog grades a Multi-SWE-bench fix-run log as the evaluator does:
// the class's parse, the harness's verdict; a log without test results is
// unresolved; a log that is not UTF-8 is an error, as the harness's strict
// decode of the container's log fails the instance; a log that begins with
// the eval script's layout line is an error, not a verdict.
func TestMultiSWEGradeLog(t *testing.T) {
	row := multiSWEJqRow(t, 4242, strings.Repeat("ab", 20), "diff --git a/f b/f\n", "diff --git a/t b/t\n")
	for _, tc := range []struct {
		name, log string
		resolved  bool
		usable    bool
		err       error
	}{
		{"resolved", "make  check-TESTS\nPASS: tests/add.test\nPASS: tests/mul.test\n", true, true, nil},
		{"add still fails", "FAIL: tests/add.test\r\nPASS: tests/mul.test\r\n", false, true, nil},
		{"no tests", "error: patch failed: src/calc.sh:1\n", false, false, nil},
		{"not UTF-8", "PASS: tests/add.test\nPASS: tests/mul.test\n\xff\xfe\n", false, false, grade.ErrInvalidUTF8},
		{"image without layout", family.MultiSWEImageMarker + "\nPASS: tests/add.test\nPASS: tests/mul.test\n", false, false, family.ErrMultiSWEImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: row, Log: []byte(tc.log), Fresh: true})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, family.GradingMultiSWE, rep.Notes.Grading)
			assert.Equal(t, tc.resolved, rep.Resolved)
			assert.Equal(t, tc.usable, rep.PatchSuccessfullyApplied)
		})
	}
}
