package swebench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestPrepareInfersMode: an empty Config.Mode becomes the mode the other
// fields ask for, as the eval command's flags do; when none asks, each row
// runs as upstream would run it: in its official image when the row names
// one or the harness tables know its repository, else in workspace mode.
func TestPrepareInfersMode(t *testing.T) {
	commit := strings.Repeat("a", 40)
	withImage := []dataset.Instance{{InstanceID: "a", Image: "x/a:1"}, {InstanceID: "b", Image: "x/b:1"}}
	mixed := []dataset.Instance{{InstanceID: "a", Image: "x/a:1"}, {InstanceID: "b"}}
	official := []dataset.Instance{{InstanceID: "astropy__astropy-12907", Repo: "astropy/astropy", Version: "4.3", BaseCommit: commit},
		{InstanceID: "django__django-11099", Repo: "django/django", Version: "3.0", BaseCommit: commit}}
	own := []dataset.Instance{{InstanceID: "me__tool-1", Repo: "me/tool", BaseCommit: commit}}
	type testCase struct {
		name  string
		cfg   swebench.Config
		rows  []dataset.Instance
		want  harness.Mode
		modes map[string]harness.Mode
	}
	for _, tc := range []testCase{
		{name: "official repositories", rows: official, want: harness.ModePrebuilt},
		{name: "own repositories", rows: own, want: harness.ModeWorkspace},
		{name: "official and own", rows: append(append([]dataset.Instance(nil), official...), own...), want: "",
			modes: map[string]harness.Mode{"astropy__astropy-12907": harness.ModePrebuilt, "django__django-11099": harness.ModePrebuilt, "me__tool-1": harness.ModeWorkspace}},
		{name: "rows that name images and rows that do not", rows: mixed, want: "",
			modes: map[string]harness.Mode{"a": harness.ModePrebuilt, "b": harness.ModeWorkspace}},
		{name: "rows that all name images", rows: withImage, want: harness.ModePrebuilt},
		{name: "no rows", want: harness.ModeWorkspace},
		{name: "namespace", cfg: swebench.Config{Namespace: "swebench"}, rows: mixed, want: harness.ModePrebuilt},
		{name: "tag", cfg: swebench.Config{ImageTag: "v2"}, want: harness.ModePrebuilt},
		{name: "no namespace", cfg: swebench.Config{Namespace: swebench.NoNamespace}, rows: withImage, want: harness.ModeWorkspace},
		{name: "no namespace with a tag", cfg: swebench.Config{Namespace: swebench.NoNamespace, ImageTag: "v1"}, rows: mixed, want: harness.ModePrebuilt},
		{name: "images built as upstream builds them", cfg: swebench.Config{Namespace: swebench.NoNamespace, BuildImages: &swebench.ImageBuild{}}, rows: withImage, want: harness.ModePrebuilt},
		{name: "image beats row images", cfg: swebench.Config{Image: "img"}, rows: withImage, want: harness.ModeWorkspace},
		{name: "repo sources beat row images", cfg: swebench.Config{RepoSources: []string{"/r"}}, rows: withImage, want: harness.ModeWorkspace},
		{name: "image map", cfg: swebench.Config{ImageMap: map[string]string{"a/b": "img"}}, rows: withImage, want: harness.ModeWorkspace},
		{name: "workspace mode asked for", cfg: swebench.Config{Mode: harness.ModeWorkspace}, rows: own, want: harness.ModeWorkspace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dataset, cfg.RunID, cfg.RewriteReports, cfg.LogDir = tc.rows, "r", true, t.TempDir()
			for _, r := range tc.rows {
				patch := "diff"
				cfg.Predictions = append(cfg.Predictions, dataset.Prediction{InstanceID: r.InstanceID, ModelNameOrPath: "m", ModelPatch: &patch})
			}
			p, err := swebench.Prepare(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.Mode)
			if tc.modes != nil {
				assert.Equal(t, tc.modes, p.Modes)
			}
			assert.Equal(t, harness.V5, p.Rules, "the default rules")
		})
	}
}

// TestPrepareOfficialImages: with no mode asked for, an official row runs
// in its official image, named as upstream names it, or in the row's own
// image (5.0.2 rows).
func TestPrepareOfficialImages(t *testing.T) {
	commit := strings.Repeat("a", 40)
	rows := []dataset.Instance{
		{InstanceID: "astropy__astropy-12907", Repo: "astropy/astropy", Version: "4.3", BaseCommit: commit, Patch: "diff"},
		{InstanceID: "django__django-11099", Repo: "django/django", Version: "3.0", BaseCommit: commit, Patch: "diff", Image: "registry.example/django:11099"},
	}
	cfg := swebench.Config{Dataset: rows, Gold: true, RunID: "r", RewriteReports: true, LogDir: t.TempDir()}
	p, err := swebench.Prepare(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, harness.ModePrebuilt, p.Mode)
	assert.Equal(t, []string{"registry.example/django:11099", "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"}, p.Images)

	cfg.Namespace, cfg.ImageTag = "mirror", "v1"
	p, err = swebench.Prepare(context.Background(), cfg)
	require.NoError(t, err)
	assert.Contains(t, p.Images, "mirror/sweb.eval.x86_64.astropy_1776_astropy-12907:v1")
}

// TestPrepareRefusesOfficialReposInWorkspaceImages: workspace mode grades
// an official repository only in an image the image map names for it; the
// refusal comes before any engine is asked or anything is written.
func TestPrepareRefusesOfficialReposInWorkspaceImages(t *testing.T) {
	commit := strings.Repeat("a", 40)
	rows := []dataset.Instance{
		{InstanceID: "django__django-11099", Repo: "django/django", Version: "3.0", BaseCommit: commit, Patch: "diff"},
		{InstanceID: "astropy__astropy-12907", Repo: "astropy/astropy", Version: "4.3", BaseCommit: commit, Patch: "diff"},
		{InstanceID: "me__tool-1", Repo: "me/tool", BaseCommit: commit, Patch: "diff"},
	}
	dir := t.TempDir()
	type testCase struct {
		name string
		cfg  swebench.Config
		want []string // refused repositories; nil: accepted
	}
	for _, tc := range []testCase{
		{name: "workspace mode", cfg: swebench.Config{Mode: harness.ModeWorkspace}, want: []string{"astropy/astropy", "django/django"}},
		{name: "repo sources", cfg: swebench.Config{RepoSources: []string{dir}}, want: []string{"astropy/astropy", "django/django"}},
		{name: "an image for everything", cfg: swebench.Config{Image: "img"}, want: []string{"astropy/astropy", "django/django"}},
		{name: "image map names one", cfg: swebench.Config{ImageMap: map[string]string{"django/django": "dj"}}, want: []string{"astropy/astropy"}},
		{name: "image map names both", cfg: swebench.Config{ImageMap: map[string]string{"django/django": "dj", "astropy/astropy:4.3": "ap"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dataset, cfg.Gold, cfg.RunID, cfg.LogDir = rows, true, "r", filepath.Join(dir, "logs")
			if tc.want == nil {
				cfg.RewriteReports = true // no engine to reach
				p, err := swebench.Prepare(context.Background(), cfg)
				require.NoError(t, err)
				assert.Equal(t, harness.ModeWorkspace, p.Mode)
				return
			}
			cfg.Sandboxes = []*sandbox.Client{nil} // never reached: the refusal comes first
			p, err := swebench.Prepare(context.Background(), cfg)
			var wie *swebench.WorkspaceImageError
			require.ErrorAs(t, err, &wie)
			assert.Equal(t, tc.want, wie.Repos)
			assert.ErrorIs(t, err, swebench.ErrConfig)
			for _, r := range tc.want {
				assert.Contains(t, err.Error(), r)
			}
			assert.Contains(t, err.Error(), "official prebuilt images")
			assert.Contains(t, err.Error(), "build them locally")
			assert.Contains(t, err.Error(), "image map")
			assert.Nil(t, p)
			assert.NoDirExists(t, cfg.LogDir)
		})
	}
}

// TestConfigValidate: contradictory and bad settings are typed errors
// naming the field, from Validate and from Prepare alike.
func TestConfigValidate(t *testing.T) {
	type testCase struct {
		name            string
		cfg             swebench.Config
		field, conflict string
	}
	for _, tc := range []testCase{
		{name: "no run id", cfg: swebench.Config{}, field: "RunID"},
		{name: "rules", cfg: swebench.Config{RunID: "r", Rules: "v3"}, field: "Rules"},
		{name: "mode", cfg: swebench.Config{RunID: "r", Mode: "docker"}, field: "Mode"},
		{name: "repos with namespace", cfg: swebench.Config{RunID: "r", RepoSources: []string{"/r"}, Namespace: "swebench"}, field: "RepoSources", conflict: "Namespace"},
		{name: "image with tag", cfg: swebench.Config{RunID: "r", Image: "i", ImageTag: "v1"}, field: "Image", conflict: "ImageTag"},
		{name: "image with prebuilt mode", cfg: swebench.Config{RunID: "r", Image: "i", Mode: harness.ModePrebuilt}, field: "Image", conflict: "Mode"},
		{name: "namespace with workspace mode", cfg: swebench.Config{RunID: "r", Namespace: "swebench", Mode: harness.ModeWorkspace}, field: "Namespace", conflict: "Mode"},
		{name: "two image maps", cfg: swebench.Config{RunID: "r", ImageMap: map[string]string{}, ImageMapFile: "m.json"}, field: "ImageMapFile", conflict: "ImageMap"},
		{name: "shard", cfg: swebench.Config{RunID: "r", Shard: swebench.Shard{Index: 3, Count: 2}}, field: "Shard"},
		{name: "repeat with rewrite", cfg: swebench.Config{RunID: "r", Repeat: 2, RewriteReports: true}, field: "Repeat", conflict: "RewriteReports"},
		{name: "gold and predictions", cfg: swebench.Config{RunID: "r", Gold: true, Predictions: []dataset.Prediction{{InstanceID: "a"}}}, field: "Predictions", conflict: "Gold"},
		{name: "task repo with namespace", cfg: swebench.Config{RunID: "r", TaskRepo: "tr", Namespace: "swebench"}, field: "TaskRepo", conflict: "Namespace"},
		{name: "task repo with tag", cfg: swebench.Config{RunID: "r", TaskRepo: "tr", ImageTag: "v1"}, field: "TaskRepo", conflict: "ImageTag"},
		{name: "task repo with no namespace", cfg: swebench.Config{RunID: "r", TaskRepo: "tr", Namespace: swebench.NoNamespace}, field: "TaskRepo", conflict: "Namespace"},
		{name: "task repo in workspace mode", cfg: swebench.Config{RunID: "r", TaskRepo: "tr", Mode: harness.ModeWorkspace}, field: "TaskRepo", conflict: "Mode"},
		{name: "task repo with an image map", cfg: swebench.Config{RunID: "r", TaskRepo: "tr", ImageMapFile: "m.json"}, field: "TaskRepo", conflict: "ImageMapFile"},
		{name: "build with a namespace", cfg: swebench.Config{RunID: "r", BuildImages: &swebench.ImageBuild{}, Namespace: "swebench"}, field: "BuildImages", conflict: "Namespace"},
		{name: "build in workspace mode", cfg: swebench.Config{RunID: "r", BuildImages: &swebench.ImageBuild{}, Namespace: swebench.NoNamespace, Mode: harness.ModeWorkspace}, field: "BuildImages", conflict: "Mode"},
		{name: "build with an image", cfg: swebench.Config{RunID: "r", BuildImages: &swebench.ImageBuild{}, Namespace: swebench.NoNamespace, Image: "i"}, field: "Image", conflict: "BuildImages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, err := range []error{tc.cfg.Validate(), prepareErr(tc.cfg)} {
				var ce *swebench.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.field, ce.Field)
				assert.Equal(t, tc.conflict, ce.Conflict)
				assert.ErrorIs(t, err, swebench.ErrConfig)
			}
		})
	}
	assert.NoError(t, swebench.Config{RunID: "r", Namespace: swebench.NoNamespace, Image: "i"}.Validate())
	assert.NoError(t, swebench.Config{RunID: "r", Namespace: swebench.NoNamespace, BuildImages: &swebench.ImageBuild{}, RepoSources: []string{"/r"}}.Validate(),
		"the builds read dependency files from the repository sources")
	assert.NoError(t, swebench.Config{RunID: "r", TaskRepo: "tr", RepoSources: []string{"/r"}}.Validate())
}

// The official --namespace's spellings of "no namespace".
func TestIsNoNamespace(t *testing.T) {
	for ns, want := range map[string]bool{"": true, "none": true, "None": true, "null": true, "NULL": true, "swebench": false, "nonex": false} {
		assert.Equal(t, want, swebench.IsNoNamespace(ns), "%q", ns)
	}
}

func prepareErr(cfg swebench.Config) error {
	cfg.RewriteReports = true
	_, err := swebench.Prepare(context.Background(), cfg)
	return err
}

// TestPrepareGoldAndShards: the gold predictions come from the whole split
// under v4 rules and from the selection under v5; a shard keeps its slice
// of the selection and, on shard 1, the predictions outside it.
func TestPrepareGoldAndShards(t *testing.T) {
	commit := strings.Repeat("a", 40)
	var rows []dataset.Instance
	for _, id := range []string{"me__t-1", "me__t-2", "me__t-3", "me__t-4", "me__t-5"} {
		rows = append(rows, dataset.Instance{InstanceID: id, Repo: "me/t", BaseCommit: commit, Patch: "diff " + id})
	}
	dir := t.TempDir()
	run := func(t *testing.T, cfg swebench.Config) *swebench.Result {
		t.Helper()
		cfg.Dataset, cfg.Gold, cfg.RewriteReports, cfg.LogDir, cfg.ReportDir = rows, true, true, filepath.Join(dir, "logs"), dir
		res, err := swebench.Evaluate(context.Background(), cfg)
		require.NoError(t, err)
		return res
	}
	sel := []string{"me__t-2", "me__t-4", "me__t-5"}
	v4 := run(t, swebench.Config{RunID: "v4", Rules: harness.V4, InstanceIDs: sel})
	assert.Equal(t, 5, v4.Report.SubmittedInstances, "v4: the whole split")
	v5 := run(t, swebench.Config{RunID: "v5", Rules: harness.V5, InstanceIDs: sel})
	assert.Equal(t, 3, v5.Report.SubmittedInstances, "v5: the selection")

	s1 := run(t, swebench.Config{RunID: "s1", Rules: harness.V4, InstanceIDs: sel, Shard: swebench.Shard{Index: 1, Count: 2}})
	s2 := run(t, swebench.Config{RunID: "s2", Rules: harness.V4, InstanceIDs: sel, Shard: swebench.Shard{Index: 2, Count: 2}})
	assert.Equal(t, 4, s1.Report.SubmittedInstances, "shard 1: its slice and the predictions outside the selection")
	assert.Equal(t, 1, s2.Report.SubmittedInstances)
	assert.Equal(t, 5, s1.Report.SubmittedInstances+s2.Report.SubmittedInstances)

	p, err := swebench.Prepare(context.Background(), swebench.Config{Dataset: rows, Gold: true, RunID: "s", RewriteReports: true, LogDir: dir,
		InstanceIDs: sel, Shard: swebench.Shard{Index: 2, Count: 2}})
	require.NoError(t, err)
	assert.Equal(t, swebench.Shard{Index: 2, Count: 2}, p.Shard)
	assert.Equal(t, 3, p.ShardOf)
	assert.Equal(t, 1, p.Selected)

	_, err = swebench.Prepare(context.Background(), swebench.Config{Dataset: rows, Gold: true, RunID: "s", RewriteReports: true, LogDir: dir,
		InstanceIDs: sel, Shard: swebench.Shard{Index: 4, Count: 4}})
	var empty *swebench.EmptyShardError
	require.ErrorAs(t, err, &empty)
	assert.Equal(t, 3, empty.Selected)
}

// TestPrepareReadsImageMapFileOnce: an image map file picks the images of
// the plan, and a bad one is an error naming its line.
func TestPrepareImageMapFile(t *testing.T) {
	p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"swebox-test/calc": "example/calc:1"}`), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"swebox-test/calc\": 3\n}"), 0o644))
	cfg := swebench.Config{
		Dataset: []dataset.Instance{p.Instance("calc__calc-1")}, Predictions: []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)},
		RunID: "map", RewriteReports: true, LogDir: dir, ImageMapFile: good,
	}
	plan, err := swebench.Prepare(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"example/calc:1"}, plan.Images)
	assert.Equal(t, []string{"calc__calc-1"}, plan.Instances)

	cfg.ImageMapFile = bad
	_, err = swebench.Prepare(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+":2")

	cfg.ImageMap = map[string]string{"a/b": "c"}
	_, err = swebench.Prepare(context.Background(), cfg)
	assert.Error(t, err, "ImageMap and ImageMapFile together")
}

// TestPrepareMissingImages: an image that is neither on the engine nor
// pullable is one typed error before anything runs or is written.
func TestPrepareMissingImages(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	dir := t.TempDir()
	cfg := p.Config(t, c, "missing-images", []dataset.Instance{p.Instance("calc__calc-1")}, []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)})
	cfg.LogDir, cfg.ReportDir = filepath.Join(dir, "logs"), filepath.Join(dir, "reports")
	cfg.Image = "swebox/no-such-image:0"

	_, err := swebench.Prepare(context.Background(), cfg)
	require.ErrorIs(t, err, swebench.ErrImagesMissing)
	require.ErrorIs(t, err, sandbox.ErrImageNotFound)
	var mie *swebench.MissingImagesError
	require.ErrorAs(t, err, &mie)
	assert.Equal(t, []string{"swebox/no-such-image:0"}, mie.Images)
	assert.Equal(t, harness.ModeWorkspace, mie.Mode)
	assert.Equal(t, c.Host(), mie.Host)

	res, err := swebench.Evaluate(context.Background(), cfg)
	require.ErrorIs(t, err, swebench.ErrImagesMissing, "Evaluate prepares the same way")
	assert.Nil(t, res)
	assert.NoDirExists(t, cfg.LogDir)
	assert.NoDirExists(t, cfg.ReportDir)
}

// TestEvaluateClosesTheClientItMade: without Config.Sandboxes the run makes
// a client from the environment and closes it; clients the caller passes
// are left open.
func TestEvaluateClosesTheClientItMade(t *testing.T) {
	c := testenv.Client(t)
	var mu sync.Mutex
	var closed []*sandbox.Client
	defer swebench.SetCloseClient(func(c *sandbox.Client) error {
		mu.Lock()
		closed = append(closed, c)
		mu.Unlock()
		return c.Close()
	})()

	p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
	empty := ""
	dir := t.TempDir()
	cfg := swebench.Config{
		// An empty patch: nothing runs, but the engine is reached.
		Dataset:     []dataset.Instance{p.Instance("calc__calc-1")},
		Predictions: []dataset.Prediction{{InstanceID: "calc__calc-1", ModelNameOrPath: "m", ModelPatch: &empty}},
		RunID:       "close", LogDir: filepath.Join(dir, "logs"), ReportDir: filepath.Join(dir, "reports"),
	}
	t.Setenv("DOCKER_HOST", c.Host())
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"calc__calc-1"}, res.Report.EmptyPatchIDs)
	assert.Len(t, closed, 1, "the client Evaluate made is closed")

	closed = nil
	cfg.Sandboxes = []*sandbox.Client{c}
	cfg.RunID = "close-2"
	_, err = swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	assert.Empty(t, closed, "the caller's client is the caller's")
}
