package swebench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
)

// A SWE-PolyBench row runs end to end as its harness runs it: in an image
// built from the row's Dockerfile over the repository (as the harness
// builds one when no prebuilt image exists), with the repository at the
// image's working directory (/srv/calc here, not /testbed), the test patch
// applied before the model patch with the harness's two commands, the log
// stderr first with the exit status twice, graded by the repository's
// parser class (PythonPyUnit) and the harness's rule. The gold patch
// resolves, a patch that fixes nothing does not, and a patch that does not
// apply is graded unresolved with patch_successfully_applied false, as
// the harness records it (patch_applied False), not an error.
func TestPolyBenchRunsAsItsHarness(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	ctx := context.Background()
	const id = "yt-dlp__yt-dlp-4242"
	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	image := family.PolyBenchImage(id, ns, "latest")
	dockerfile := "FROM " + testenv.Image() + "\nWORKDIR /srv/calc\nCOPY . .\n"
	swebenchtest.BuildImage(t, c, filepath.Join(p.Sources, "swebox-test__calc"), "", dockerfile, image)

	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	inst := dataset.Instance{
		InstanceID: id, Repo: "yt-dlp/yt-dlp", BaseCommit: p.Base, Patch: swebenchtest.Gold, TestPatch: swebenchtest.TestPatch,
		Extra: map[string]json.RawMessage{
			"language": str("Python"), "Dockerfile": str(dockerfile),
			"test_command": str("python3 -m pytest -v -rA -p no:cacheprovider tests"),
			"F2P":          str("['tests/test_add.py:None:test_add']"),
			"P2P":          str("['tests/test_mul.py:None:test_mul', 'tests/test_mul.py:None:test_mul_zero']"),
		},
	}
	noop := swebenchtest.ReplaceDiff("README.md", "calc\n", "calc, a calculator\n")
	bad := "diff --git a/nothere.py b/nothere.py\n--- a/nothere.py\n+++ b/nothere.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 3\n"
	cfg := p.Config(t, c, "polybench", []dataset.Instance{inst}, nil)
	cfg.Repos, cfg.Image, cfg.Namespace, cfg.MaxWorkers = nil, "", ns, 1

	for _, tc := range []struct {
		name, patch string
		status      swebench.Status
		applied     bool
		exit        string
	}{
		{"gold", swebenchtest.Gold, swebench.StatusResolved, true, "0"},
		{"no-op", noop, swebench.StatusUnresolved, true, "1"},
		{"broken", bad, swebench.StatusUnresolved, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			cfg.RunID = "polybench-" + tc.name
			cfg.Predictions = []dataset.Prediction{swebenchtest.Pred(id, tc.patch)}
			res, err := swebench.Evaluate(ctx, cfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			r := res.Instances[0]
			require.Equal(t, tc.status, r.Status, r.Error)
			require.NotNil(t, r.Report)
			assert.Equal(t, tc.applied, r.Report.PatchSuccessfullyApplied)
			dir := swebenchtest.InstanceDir(cfg, id)
			if !tc.applied {
				assert.Nil(t, r.Report.TestsStatus)
				require.Len(t, r.PatchAttempts, 2)
				assert.Equal(t, "git apply -v --ignore-whitespace --reject /srv/calc/.git/swebox/patch.diff", r.PatchAttempts[0].Command)
				assert.Equal(t, "patch --batch --fuzz=5 -p1 -f -i /srv/calc/.git/swebox/patch.diff", r.PatchAttempts[1].Command)
				assert.NoFileExists(t, filepath.Join(dir, "test_output.txt"))
				return
			}
			assert.Equal(t, "git apply -v --ignore-whitespace --reject /srv/calc/.git/swebox/patch.diff", r.PatchCommand)
			log, err := os.ReadFile(filepath.Join(dir, "test_output.txt"))
			require.NoError(t, err)
			// stderr (bash's trace of the command) first, then pytest's
			// stdout, then docker_run's two status lines.
			assert.True(t, strings.HasPrefix(string(log), "+ python3 -m pytest"), "%.200s", log)
			line := "Container exited with status code: " + tc.exit
			assert.True(t, strings.HasSuffix(string(log), "\n"+line+"\n"+line), "%s", log)
			assert.Contains(t, string(log), "tests/test_add.py::test_add", "the test patch was applied first")
			assert.NoFileExists(t, filepath.Join(dir, "test_stdout.txt"))
			if tc.status == swebench.StatusUnresolved {
				assert.Equal(t, swebench.Fraction{Passed: 0, Total: 1}, r.FailToPass)
				assert.Equal(t, swebench.Fraction{Passed: 2, Total: 2}, r.PassToPass)
			}
		})
	}
	assert.Zero(t, testenv.CountLeftovers(t, c, c.Session()).Containers)
}
