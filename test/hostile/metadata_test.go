package hostile_test

import (
	"context"
	"io/fs"
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
)

// A name longer than any file system allows for one component.
var longName = strings.Repeat("n", 300)

// metadataRoot holds every directory of a run, so that anything written
// outside them (by a name that climbed out) is found.
type metadataRoot struct{ root, logs, reports, work string }

func newMetadataRoot(t *testing.T) metadataRoot {
	r := metadataRoot{root: t.TempDir()}
	r.logs = filepath.Join(r.root, "a", "b", "logs")
	r.reports = filepath.Join(r.root, "a", "b", "reports")
	r.work = filepath.Join(r.root, "a", "b", "work")
	return r
}

// outside lists the files written under root but outside the run's three
// directories.
func (r metadataRoot) outside(t *testing.T) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if d == nil || d.IsDir() {
			return nil
		}
		for _, in := range []string{r.logs, r.reports, r.work} {
			if strings.HasPrefix(p, in+string(filepath.Separator)) {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out
}

// unreachable is a client whose engine never answers: a run rejected for
// its names must fail before it needs one.
func unreachable(t *testing.T) *sandbox.Client {
	c, err := sandbox.New(sandbox.WithHost("unix:///nonexistent/docker.sock"))
	require.NoError(t, err)
	return c
}

// TestHostileRunIDs: run ids name the log directory and the run report.
// Unsafe ones are rejected before anything is written or any engine is
// contacted.
func TestHostileRunIDs(t *testing.T) {
	type testCase struct {
		name, runID string
	}
	for _, tc := range []testCase{
		{name: "dotdot", runID: "../../escape"},
		{name: "dotdot alone", runID: ".."},
		{name: "dot", runID: "."},
		{name: "absolute", runID: "/tmp/escape"},
		{name: "backslash", runID: `..\escape`},
		{name: "NUL", runID: "run\x00id"},
		{name: "newline", runID: "run\nid"},
		{name: "too long", runID: longName},
		{name: "not UTF-8", runID: "run\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := newMetadataRoot(t)
			p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
			cfg := swebench.Config{
				Dataset: []dataset.Instance{p.Instance("calc__calc-1")}, Predictions: []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)},
				RunID: tc.runID, LogDir: dirs.logs, ReportDir: dirs.reports, WorkDir: dirs.work,
				Sandboxes: []*sandbox.Client{unreachable(t)},
			}
			_, err := swebench.Evaluate(context.Background(), cfg)
			require.ErrorIs(t, err, dataset.ErrUnsafeName)
			assert.NoDirExists(t, filepath.Join(dirs.root, "a"), "nothing is written")
		})
	}
}

// TestHostileModelNames: the model name becomes a directory (with "/" made
// "__", as the official harness does) and part of the run report's name.
// Names that can be made safe are; the others are rejected before anything
// is written.
func TestHostileModelNames(t *testing.T) {
	type testCase struct {
		name, model string
		// dir is the safe directory name; "" when the name is rejected.
		dir string
	}
	cases := []testCase{
		{name: "dotdot", model: "../../escape", dir: "..__..__escape"},
		{name: "absolute", model: "/etc/escape", dir: "__etc__escape"},
		{name: "dotdot alone", model: ".."},
		{name: "backslash", model: `..\..\escape`},
		{name: "NUL", model: "model\x00x"},
		{name: "too long", model: longName},
		{name: "not UTF-8", model: "model\xff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dirs := newMetadataRoot(t)
			p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
			pred := swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)
			pred.ModelNameOrPath = tc.model
			cfg := swebench.Config{
				Dataset: []dataset.Instance{p.Instance("calc__calc-1")}, Predictions: []dataset.Prediction{pred},
				RunID: "run", LogDir: dirs.logs, ReportDir: dirs.reports, WorkDir: dirs.work,
			}
			if tc.dir == "" {
				cfg.Sandboxes = []*sandbox.Client{unreachable(t)}
				_, err := swebench.Evaluate(context.Background(), cfg)
				require.ErrorIs(t, err, dataset.ErrUnsafeName)
				assert.NoDirExists(t, filepath.Join(dirs.root, "a"), "nothing is written")
				return
			}
			c := testenv.Client(t)
			p = swebenchtest.NewProject(t)
			cfg.Dataset, cfg.Repos, cfg.Image = []dataset.Instance{p.Instance("calc__calc-1")}, p.Cache(t), testenv.Image()
			cfg.Sandboxes, cfg.Limits = []*sandbox.Client{c}, testenv.SmallLimits
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			assert.Equal(t, []string{"calc__calc-1"}, res.Report.ResolvedIDs)
			assert.FileExists(t, filepath.Join(dirs.logs, "run_evaluation", "run", tc.dir, "calc__calc-1", "report.json"))
			assert.Equal(t, filepath.Join(dirs.reports, tc.dir+".run.json"), res.ReportPath)
			assert.Empty(t, dirs.outside(t), "nothing is written outside the run's directories")
		})
	}
}

// TestHostileInstanceIDs: instance ids name log directories, workspaces,
// container labels and official image names. The loaders reject unsafe ids
// (swebench/dataset); a dataset built in memory with one makes that
// instance an error, with nothing written for it, while the instance beside
// it is evaluated.
func TestHostileInstanceIDs(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	dirs := newMetadataRoot(t)
	bad := map[string]string{
		"dotdot":            "../../escape",
		"absolute":          "/etc/escape",
		"NUL":               "calc__calc\x00-1",
		"too long":          longName,
		"control character": "calc__calc-1\r",
		"backslash":         `..\..\escape`,
	}
	ds := []dataset.Instance{p.Instance("calc__calc-1")}
	preds := []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold)}
	for _, id := range bad {
		ds = append(ds, p.Instance(id))
		preds = append(preds, swebenchtest.Pred(id, swebenchtest.Gold))
	}
	cfg := p.Config(t, c, "run", ds, preds)
	cfg.LogDir, cfg.ReportDir, cfg.WorkDir = dirs.logs, dirs.reports, dirs.work
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	got := swebenchtest.ByID(res)
	assert.Equal(t, swebench.StatusResolved, got["calc__calc-1"].Status, got["calc__calc-1"].Error)
	for name, id := range bad {
		t.Run(name, func(t *testing.T) {
			r, ok := got[id]
			require.True(t, ok)
			assert.Equal(t, swebench.StatusError, r.Status)
			assert.Contains(t, r.Error, "instance_id")
			assert.Contains(t, res.Report.ErrorIDs, id)
		})
	}
	assert.Empty(t, dirs.outside(t), "nothing is written outside the run's directories")
	entries, err := os.ReadDir(filepath.Join(dirs.logs, "run_evaluation", "run", "org__model"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the safe instance has a log directory")
	assert.Equal(t, "calc__calc-1", entries[0].Name())
	assert.Equal(t, testenv.Leftovers{}, testenv.CountLeftovers(t, c, c.Session()))
}

// TestHostileInstanceIDCase: ids that differ only in letter case would share
// a log directory on case-insensitive file systems and share the official
// image name (instance_id.lower()); the run is rejected before anything is
// written or any engine is contacted.
func TestHostileInstanceIDCase(t *testing.T) {
	type testCase struct {
		name string
		ids  []string
	}
	for _, tc := range []testCase{
		{name: "ASCII", ids: []string{"calc__calc-1", "CALC__calc-1"}},
		{name: "Unicode", ids: []string{"calc__é-1", "calc__É-1"}},
		{name: "same id twice", ids: []string{"calc__calc-1", "calc__calc-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := newMetadataRoot(t)
			p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
			cfg := swebench.Config{
				RunID: "run", LogDir: dirs.logs, ReportDir: dirs.reports, WorkDir: dirs.work,
				Sandboxes: []*sandbox.Client{unreachable(t)},
			}
			for _, id := range tc.ids {
				cfg.Dataset = append(cfg.Dataset, p.Instance(id))
				cfg.Predictions = append(cfg.Predictions, swebenchtest.Pred(id, swebenchtest.Gold))
			}
			_, err := swebench.Evaluate(context.Background(), cfg)
			require.ErrorIs(t, err, dataset.ErrDuplicateID)
			assert.NoDirExists(t, filepath.Join(dirs.root, "a"), "nothing is written")
		})
	}
}

// TestHostilePredictionIDs: predictions naming ids the dataset lacks (the
// case-changed twin of a real id included) are rejected, as the official
// harness's ValueError.
func TestHostilePredictionIDs(t *testing.T) {
	dirs := newMetadataRoot(t)
	p := swebenchtest.Project{Repo: "swebox-test/calc", Base: strings.Repeat("a", 40)}
	cfg := swebench.Config{
		Dataset:     []dataset.Instance{p.Instance("calc__calc-1")},
		Predictions: []dataset.Prediction{swebenchtest.Pred("calc__calc-1", swebenchtest.Gold), swebenchtest.Pred("CALC__calc-1", swebenchtest.Gold)},
		RunID:       "run", LogDir: dirs.logs, ReportDir: dirs.reports, WorkDir: dirs.work,
		Sandboxes: []*sandbox.Client{unreachable(t)},
	}
	_, err := swebench.Evaluate(context.Background(), cfg)
	require.ErrorIs(t, err, dataset.ErrUnknownIDs)
	assert.NoDirExists(t, filepath.Join(dirs.root, "a"))
}

// FuzzSafePathComponent: whatever the name, an accepted one is exactly one
// path component below its parent, and the same for every kind.
func FuzzSafePathComponent(f *testing.F) {
	for _, s := range []string{"org/model", "../../x", "/abs", `a\b`, "a\x00b", ".", "..", "...", "é", longName, "a/../..", "__", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []string{dataset.KindInstanceID, dataset.KindModel, dataset.KindRunID} {
			safe, err := dataset.SafePathComponent(kind, s)
			if err != nil {
				require.ErrorIs(t, err, dataset.ErrUnsafeName)
				require.Empty(t, safe)
				continue
			}
			base := filepath.Join("/", "logs")
			p := filepath.Join(base, safe)
			require.Equal(t, base, filepath.Dir(p), "%q (%s) stays one level below its parent", s, kind)
			require.Equal(t, safe, filepath.Base(p))
			require.NotContains(t, safe, "\x00")
			require.LessOrEqual(t, len(safe), dataset.MaxNameBytes)
		}
	})
}
