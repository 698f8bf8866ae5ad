package swebench_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
)

// proStandinID is the instance of testdata/pro_checkout, a stand-in of a
// SWE-bench_Pro-os checkout for the test project.
const proStandinID = "instance_swebox-test__calc-76124d0f222e76900836fec30415316ca73f06b1-vnan"

const proCheckout = "testdata/pro_checkout"

// proRow is a row in ScaleAI/SWE-bench_Pro's form for the test project:
// its lists are Python list literals in strings, the test files come from
// the commit tagged pro-tests in the image (before_repo_set_cmd's last
// line checks them out, as Pro's rows do from the fix commit).
func proRow(id, base string) dataset.Instance {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	return dataset.Instance{
		InstanceID: id, Repo: "swebox-test/calc", BaseCommit: base, Patch: swebenchtest.Gold, TestPatch: swebenchtest.TestPatch,
		Extra: map[string]json.RawMessage{
			"repo_language":              str("python"),
			"fail_to_pass":               str("['tests/test_add.py::test_add']"),
			"pass_to_pass":               str("['tests/test_mul.py::test_mul', 'tests/test_mul.py::test_mul_zero']"),
			"selected_test_files_to_run": str("['tests/test_add.py', 'tests/test_mul.py']"),
			"before_repo_set_cmd": str("git reset --hard " + base + "\ngit clean -fd\ngit checkout " + base +
				"\ngit checkout pro-tests -- tests/test_add.py tests/test_mul.py"),
		},
	}
}

// buildProStandin builds testdata/pro_checkout's base Dockerfile (FROM
// the project's test image) over the project with its test files' commit,
// tagged image.
func buildProStandin(t *testing.T, c *sandbox.Client, p swebenchtest.Project, image, extra string) {
	t.Helper()
	df, err := os.ReadFile(filepath.Join(proCheckout, "dockerfiles/base_dockerfile", proStandinID, "Dockerfile"))
	require.NoError(t, err)
	dockerfile := strings.Replace(string(df), "FROM swebox/python:bookworm", "FROM "+testenv.Image(), 1) + extra
	src := filepath.Join(p.Sources, "swebox-test__calc")
	require.NoError(t, os.WriteFile(filepath.Join(src, ".pro-tests.diff"), []byte(swebenchtest.TestPatch), 0o644))
	defer os.Remove(filepath.Join(src, ".pro-tests.diff"))
	swebenchtest.BuildImage(t, c, src, "app", dockerfile, image)
}

// A SWE-bench Pro row runs end to end as scaleapi/SWE-bench_Pro-os's
// swe_bench_pro_eval.py runs it, within the sandbox's hardening: its
// image named as get_dockerhub_image_uri names it, the repository at /app,
// the entry script of create_entryscript (the Dockerfiles' ENV lines
// exported, the repository reset, the patch applied by the script's own
// git apply, the test files checked out by before_repo_set_cmd's last
// line, run_script.sh on the selected files) and the instance's parser.py
// run in the sandbox, graded by Pro's rule on its output.json. The gold
// patch resolves; a patch that fixes nothing does not; a patch that does
// not apply leaves the tests to run on the base commit, unresolved as Pro
// grades it (with patch_successfully_applied false); a patch whose tests
// look around the sandbox finds root without capabilities and no network
// but loopback; an image in which the workspace cannot be set up is an
// error instance, not a verdict.
func TestProRunsAsItsHarness(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	ctx := context.Background()
	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	image := family.ProImage(proStandinID, ns, "")
	require.Equal(t, ns+"/sweap-images:swebox-test.calc-swebox-test__calc-76124d0f222e76900836fec30415316ca73f06b1", image)
	buildProStandin(t, c, p, image, "")

	noop := swebenchtest.ReplaceDiff("README.md", "calc\n", "calc, a calculator\n")
	bad := "diff --git a/nothere.py b/nothere.py\n--- a/nothere.py\n+++ b/nothere.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 3\n"
	probe := swebenchtest.ConftestDiff(`import os
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
raise RuntimeError("PROBE uid=%d caps=%s net=%s" % (os.getuid(), caps, ",".join(sorted(os.listdir("/sys/class/net")))))
`)
	cfg := p.Config(t, c, "pro", []dataset.Instance{proRow(proStandinID, p.Base)}, nil)
	cfg.Repos, cfg.Image, cfg.Namespace, cfg.MaxWorkers = nil, "", ns, 1
	cfg.ProCheckout = proCheckout
	cfg.Timeout = 2 * cfg.Timeout

	for _, tc := range []struct {
		name, patch string
		status      swebench.Status
		applied     bool
		f2p, p2p    swebench.Fraction
		log         string
	}{
		{"gold", swebenchtest.Gold, swebench.StatusResolved, true, swebench.Fraction{Passed: 1, Total: 1}, swebench.Fraction{Passed: 2, Total: 2},
			"CALC_ENV=from-the-instance-dockerfile"},
		{"no-op", noop, swebench.StatusUnresolved, true, swebench.Fraction{Passed: 0, Total: 1}, swebench.Fraction{Passed: 2, Total: 2},
			"tests/test_add.py::test_add FAILED"},
		{"broken", bad, swebench.StatusUnresolved, false, swebench.Fraction{Passed: 0, Total: 1}, swebench.Fraction{Passed: 2, Total: 2},
			"error: nothere.py: No such file or directory"},
		{"probe", probe, swebench.StatusUnresolved, true, swebench.Fraction{Passed: 0, Total: 1}, swebench.Fraction{Passed: 0, Total: 2},
			"PROBE uid=0 caps=0000000000000000 net=lo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			cfg.RunID = "pro-" + tc.name
			cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(proStandinID, tc.patch)}
			res, err := swebench.Evaluate(ctx, cfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			r := res.Instances[0]
			log := swebenchtest.ReadFile(t, cfg, proStandinID, "test_output.txt")
			require.Equal(t, tc.status, r.Status, "%s\n%s", r.Error, log)
			require.NotNil(t, r.Report)
			assert.Equal(t, tc.applied, r.Report.PatchSuccessfullyApplied)
			assert.Equal(t, tc.f2p, r.FailToPass)
			assert.Equal(t, tc.p2p, r.PassToPass)
			assert.Empty(t, r.PatchAttempts, "the entry script applies the patch, not the evaluator")
			assert.Contains(t, log, tc.log)
			assert.Contains(t, log, "Running selected tests: tests/test_add.py tests/test_mul.py", "run_script.sh gets the selected files joined with commas")
			ilog := swebenchtest.ReadFile(t, cfg, proStandinID, "run_instance.log")
			assert.Contains(t, ilog, "The eval script applies the patch staged at /app/.git/swebox/patch.diff")
		})
	}

	t.Run("no-workspace", func(t *testing.T) {
		// No python in the image: the script cannot strip the patch, so
		// nothing of the patch's runs; Pro's harness would count the
		// instance unresolved, swebox an infrastructure error.
		const id = "instance_swebox-test__calc-0000000000000000000000000000000000000001-vnan"
		broken := family.ProImage(id, ns, "")
		buildProStandin(t, c, p, broken, "RUN rm /usr/local/bin/python\n")
		dir := t.TempDir()
		copyTree(t, proCheckout, dir)
		for _, sub := range []string{"run_scripts", "dockerfiles/base_dockerfile", "dockerfiles/instance_dockerfile"} {
			require.NoError(t, os.Rename(filepath.Join(dir, sub, proStandinID), filepath.Join(dir, sub, id)))
		}
		cfg := cfg
		cfg.RunID, cfg.ProCheckout = "pro-no-workspace", dir
		cfg.Dataset = []dataset.Instance{proRow(id, p.Base)}
		cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(id, swebenchtest.Gold)}
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		require.Len(t, res.Instances, 1)
		r := res.Instances[0]
		assert.Equal(t, swebench.StatusError, r.Status)
		assert.ErrorIs(t, r.Err, family.ErrProSetup)
		assert.Nil(t, r.Report)
	})
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}

// A Pro row whose files the SWE-bench_Pro-os checkout lacks, or a run
// without a checkout, is refused before anything runs, the error naming
// the missing file.
func TestProRefusedWithoutItsScripts(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	dir := t.TempDir()
	copyTree(t, proCheckout, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, "run_scripts", proStandinID, "parser.py")))
	cfg := p.Config(t, c, "pro-refused", []dataset.Instance{proRow(proStandinID, p.Base)}, []dataset.Prediction{swebenchtest.Pred(proStandinID, swebenchtest.Gold)})
	cfg.Repos, cfg.Image = nil, ""
	for _, tc := range []struct {
		name, checkout string
		check          func(t *testing.T, err error)
	}{
		{"no parser.py", dir, func(t *testing.T, err error) {
			var pf *family.ProFileError
			require.ErrorAs(t, err, &pf)
			assert.Equal(t, "run_scripts/"+proStandinID+"/parser.py", pf.Path)
			assert.Contains(t, err.Error(), "run_scripts/"+proStandinID+"/parser.py")
			assert.ErrorIs(t, err, family.ErrProRow)
		}},
		{"no checkout", "", func(t *testing.T, err error) {
			assert.ErrorIs(t, err, family.ErrNoProCheckout)
		}},
		{"not a directory", filepath.Join(proCheckout, "README.md"), func(t *testing.T, err error) {
			var ce *swebench.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "ProCheckout", ce.Field)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			cfg.ProCheckout = tc.checkout
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.Error(t, err)
			assert.Nil(t, res)
			tc.check(t, err)
			_, statErr := os.Stat(cfg.LogDir)
			assert.True(t, errors.Is(statErr, os.ErrNotExist), "nothing written")
		})
	}
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}
