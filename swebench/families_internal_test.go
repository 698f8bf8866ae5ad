package swebench

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// familyRun is a run of rows, each with a prediction.
func familyRun(rows ...dataset.Instance) Config {
	cfg := Config{RunID: "r", Dataset: rows, LogDir: "unused", WorkDir: "unused"}
	patch := "diff --git a/x b/x\n"
	for _, r := range rows {
		cfg.Predictions = append(cfg.Predictions, dataset.Prediction{InstanceID: r.InstanceID, ModelNameOrPath: "m", ModelPatch: &patch})
	}
	return cfg
}

// Rows no family claims are refused before anything runs, unless the run
// or the row gives them an environment; the refusal names the family a row
// looks like. Rows a family claims run in its images.
func TestUnclaimedRowsAreRefused(t *testing.T) {
	own := dataset.Instance{InstanceID: "acme__widget-1", Repo: "acme/widget", BaseCommit: "abcd"}
	gym := dataset.Instance{InstanceID: "getmoto__moto-5865", Repo: "getmoto/moto", BaseCommit: "abcd", Version: "4.1"}
	official := dataset.Instance{InstanceID: "django__django-11099", Repo: "django/django", BaseCommit: "abcd", Version: "3.0"}
	v5 := dataset.Instance{InstanceID: "acme__widget-2", Repo: "acme/widget", BaseCommit: "abcd", Image: "acme/widget:2"}
	parser := dataset.Instance{InstanceID: "acme__widget-3", Repo: "acme/widget", BaseCommit: "abcd", LogParser: "pytest"}
	overrides := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(overrides, []byte(`{"acme/widget": {"test_cmd": "pytest -rA"}}`), 0o644))

	type testCase struct {
		name      string
		cfg       func() Config
		refused   []string          // ids refused, nil when the run is accepted
		looksLike map[string]string // of the refused rows
		modes     map[string]harness.Mode
		images    map[string]string
	}
	for _, tc := range []testCase{
		{name: "own repository, no environment", cfg: func() Config { return familyRun(own) },
			refused: []string{"acme__widget-1"}, looksLike: map[string]string{}},
		{name: "SWE-Gym repository, no family named", cfg: func() Config { return familyRun(gym, own) },
			refused: []string{"acme__widget-1", "getmoto__moto-5865"}, looksLike: map[string]string{"getmoto__moto-5865": "swe-gym"}},
		{name: "own repository, workspace mode", cfg: func() Config { c := familyRun(own); c.Mode = harness.ModeWorkspace; return c },
			modes: map[string]harness.Mode{"acme__widget-1": harness.ModeWorkspace}},
		{name: "own repository, local sources (the demo's --repos)", cfg: func() Config { c := familyRun(own); c.RepoSources = []string{"/nowhere"}; return c },
			modes: map[string]harness.Mode{"acme__widget-1": harness.ModeWorkspace}},
		{name: "own repository, override file", cfg: func() Config { c := familyRun(own); c.SpecOverrides = overrides; return c },
			modes: map[string]harness.Mode{"acme__widget-1": harness.ModeWorkspace}},
		{name: "row names its image", cfg: func() Config { return familyRun(v5) },
			modes: map[string]harness.Mode{"acme__widget-2": harness.ModePrebuilt}, images: map[string]string{"acme__widget-2": "acme/widget:2"}},
		{name: "row names its parser", cfg: func() Config { return familyRun(parser) },
			modes: map[string]harness.Mode{"acme__widget-3": harness.ModeWorkspace}},
		{name: "official repository", cfg: func() Config { return familyRun(official) },
			modes: map[string]harness.Mode{"django__django-11099": harness.ModePrebuilt}, images: map[string]string{"django__django-11099": "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"}},
		{name: "rewriting reports runs nothing", cfg: func() Config { c := familyRun(own); c.RewriteReports = true; return c },
			modes: map[string]harness.Mode{"acme__widget-1": harness.ModeWorkspace}},
		{name: "SWE-Gym by the dataset's name", cfg: func() Config { c := familyRun(gym); c.DatasetName = "SWE-Gym/SWE-Gym"; return c },
			modes: map[string]harness.Mode{"getmoto__moto-5865": harness.ModePrebuilt}},
		{name: "SWE-Gym named", cfg: func() Config { c := familyRun(gym); c.Family = "swe-gym"; return c },
			modes: map[string]harness.Mode{"getmoto__moto-5865": harness.ModePrebuilt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := newEvaluator(tc.cfg())
			if tc.refused != nil {
				var ue *UnclaimedError
				require.ErrorAs(t, err, &ue)
				assert.ErrorIs(t, err, ErrConfig)
				assert.Equal(t, tc.refused, ue.Instances)
				assert.Equal(t, tc.looksLike, ue.LooksLike)
				assert.Contains(t, err.Error(), "Mode workspace")
				for _, fam := range ue.Families() {
					assert.Contains(t, err.Error(), `Family "`+fam+`"`)
				}
				return
			}
			require.NoError(t, err)
			for id, mode := range tc.modes {
				assert.Equal(t, mode, e.specs[id].mode, id)
			}
			for id, img := range tc.images {
				assert.Equal(t, img, e.specs[id].ts.Image, id)
			}
		})
	}
}

// A SWE-Gym row runs in SWE-Gym's image, named with "_s_", with its fork's
// table and script (SWE-bench 2.0.13's) and its grading; a version its
// table lacks is an error, not a guessed command.
func TestSWEGymRowsUseTheFamilysImages(t *testing.T) {
	gym := dataset.Instance{InstanceID: "Project-MONAI__MONAI-3403", Repo: "Project-MONAI/MONAI", BaseCommit: "abcd", Version: "0.8"}
	astropy := dataset.Instance{InstanceID: "astropy__astropy-12907", Repo: "astropy/astropy", BaseCommit: "abcd", Version: "4.3"}
	cfg := familyRun(gym, astropy)
	cfg.Family = "swe-gym"
	e, err := newEvaluator(cfg)
	require.NoError(t, err)
	require.NoError(t, e.specs[gym.InstanceID].err)
	assert.Equal(t, "xingyaoww/sweb.eval.x86_64.project-monai_s_monai-3403:latest", e.specs[gym.InstanceID].ts.Image)
	assert.Equal(t, family.ScriptSWEBench2, e.specs[gym.InstanceID].ts.Script)
	assert.Equal(t, family.GradingSWEGym, e.specs[gym.InstanceID].ts.Grading)
	assert.NoError(t, e.specs[astropy.InstanceID].err)
	assert.Equal(t, "xingyaoww/sweb.eval.x86_64.astropy_s_astropy-12907:latest", e.specs[astropy.InstanceID].ts.Image)
	assert.Equal(t, "xingyaoww/sweb.eval.x86_64.project-monai_s_monai-3403:latest", family.SWEGymImage(gym.InstanceID, "xingyaoww", "latest"))
	gym.Version = "0.0"
	old := familyRun(gym)
	old.Family = "swe-gym"
	e, err = newEvaluator(old)
	require.NoError(t, err)
	assert.ErrorIs(t, e.specs[gym.InstanceID].err, spec.ErrUnknownVersion)

	cfg.Family = "no-such"
	_, err = newEvaluator(cfg)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "Family", ce.Field)
}

// A family whose rows the evaluator cannot yet run as its harness runs
// them (Family.NotRunnable) is refused per instance before anything runs,
// never run another way; its logs still grade. SWE-PolyBench, which was
// refused so, now runs by its procedure (spec.Procedure).
func TestNotRunnableFamiliesAreRefused(t *testing.T) {
	rows, err := dataset.LoadDataset(filepath.Join("family", "testdata", "polybench", "rows.jsonl"))
	require.NoError(t, err)
	e, err := newEvaluator(familyRun(rows[0]))
	require.NoError(t, err)
	se := e.specs[rows[0].InstanceID]
	require.NoError(t, se.err)
	assert.Equal(t, family.PolyBenchProcedure("/testbed"), se.ts.Run)

	f, ok := family.Lookup("swe-polybench")
	require.True(t, ok)
	refused := *f
	refused.NotRunnable = "for this test"
	_, err = e.testSpec(&refused, rows[0], nil)
	require.ErrorIs(t, err, family.ErrNotRunnable)
	assert.Contains(t, err.Error(), "swe-polybench")
	ts, err := f.TestSpec(rows[0])
	require.NoError(t, err, "grading a log needs the family's spec")
	assert.Equal(t, family.GradingPolyBench, ts.Grading)
}
