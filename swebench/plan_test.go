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

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestPrepareInfersMode: an empty Config.Mode becomes the mode the other
// fields ask for, as the eval command's flags do.
func TestPrepareInfersMode(t *testing.T) {
	withImage := []dataset.Instance{{InstanceID: "a", Image: "x/a:1"}, {InstanceID: "b", Image: "x/b:1"}}
	mixed := []dataset.Instance{{InstanceID: "a", Image: "x/a:1"}, {InstanceID: "b"}}
	type testCase struct {
		name string
		cfg  swebench.Config
		rows []dataset.Instance
		want harness.Mode
	}
	for _, tc := range []testCase{
		{name: "rows without images", rows: mixed, want: harness.ModeWorkspace},
		{name: "rows that all name images", rows: withImage, want: harness.ModePrebuilt},
		{name: "no rows", want: harness.ModeWorkspace},
		{name: "namespace", cfg: swebench.Config{Namespace: "swebench"}, rows: mixed, want: harness.ModePrebuilt},
		{name: "tag", cfg: swebench.Config{ImageTag: "v2"}, want: harness.ModePrebuilt},
		{name: "no namespace", cfg: swebench.Config{Namespace: swebench.NoNamespace}, rows: withImage, want: harness.ModeWorkspace},
		{name: "no namespace with a tag", cfg: swebench.Config{Namespace: swebench.NoNamespace, ImageTag: "v1"}, rows: mixed, want: harness.ModePrebuilt},
		{name: "image beats row images", cfg: swebench.Config{Image: "img"}, rows: withImage, want: harness.ModeWorkspace},
		{name: "repo sources beat row images", cfg: swebench.Config{RepoSources: []string{"/r"}}, rows: withImage, want: harness.ModeWorkspace},
		{name: "image map", cfg: swebench.Config{ImageMap: map[string]string{"a/b": "img"}}, rows: withImage, want: harness.ModeWorkspace},
		{name: "explicit mode wins", cfg: swebench.Config{Mode: harness.ModePrebuilt, Image: "img"}, rows: mixed, want: harness.ModePrebuilt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dataset, cfg.RunID, cfg.RewriteReports, cfg.LogDir = tc.rows, "r", true, t.TempDir()
			p, err := swebench.Prepare(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.Mode)
			assert.Equal(t, harness.V5, p.Rules, "the default rules")
		})
	}
}

// TestPrepareReadsImageMapFileOnce: an image map file picks the images of
// the plan, and a bad one is an error naming its line.
func TestPrepareImageMapFile(t *testing.T) {
	p := testenv.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"swebox-test/calc": "example/calc:1"}`), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"swebox-test/calc\": 3\n}"), 0o644))
	cfg := swebench.Config{
		Dataset: []dataset.Instance{p.Instance("calc__calc-1")}, Predictions: []dataset.Prediction{testenv.Pred("calc__calc-1", testenv.Gold)},
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
	p := testenv.NewProject(t)
	dir := t.TempDir()
	cfg := p.Config(t, c, "missing-images", []dataset.Instance{p.Instance("calc__calc-1")}, []dataset.Prediction{testenv.Pred("calc__calc-1", testenv.Gold)})
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

	p := testenv.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
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
