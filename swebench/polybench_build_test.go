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
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/repo"
)

// polyBenchRow is a SWE-PolyBench row of the test project, filed under a
// repository with a parser class, whose Dockerfile is dockerfile.
func polyBenchRow(id, base, dockerfile string) dataset.Instance {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	return dataset.Instance{
		InstanceID: id, Repo: "yt-dlp/yt-dlp", BaseCommit: base, Patch: swebenchtest.Gold, TestPatch: swebenchtest.TestPatch,
		Extra: map[string]json.RawMessage{
			"language": str("Python"), "Dockerfile": str(dockerfile),
			"test_command": str("python3 -m pytest -v -rA -p no:cacheprovider tests"),
			"F2P":          str("['tests/test_add.py:None:test_add']"),
			"P2P":          str("['tests/test_mul.py:None:test_mul', 'tests/test_mul.py:None:test_mul_zero']"),
		},
	}
}

// A row's own Dockerfile (SWE-PolyBench's) builds, offline, over a
// checkout of its repository at base_commit, into the image a run names
// for the row (and the harness's local name), labelled as swebox's; the
// run then uses it, and the gold patch resolves. A Dockerfile that fails
// is that row's error, naming the row and the step; the other rows build.
func TestBuildRowImages(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	ctx := context.Background()
	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	// The test project, served as the row's repository.
	sources := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(p.Sources, "swebox-test__calc"), filepath.Join(sources, "yt-dlp__yt-dlp")))
	repos, err := repo.New(repo.WithLocalSources(sources), repo.WithCacheDir(t.TempDir()))
	require.NoError(t, err)
	good := polyBenchRow("swebox-test__calc-7001", p.Base,
		"FROM "+testenv.Image()+"\nWORKDIR /srv/calc\nCOPY . .\nRUN test -f calc.py && test -d .git\n")
	bad := polyBenchRow("swebox-test__calc-7002", p.Base,
		"FROM "+testenv.Image()+"\nWORKDIR /srv/calc\nCOPY . .\nRUN echo building && exit 3\n")
	plain := p.Instance("swebox-test__calc-7003")

	logs := t.TempDir()
	var events []swebench.RowImageEvent
	res, err := swebench.BuildRowImages(ctx, c, swebench.RowImageRequest{
		Instances: []dataset.Instance{good, bad, plain}, Repos: repos, WorkDir: t.TempDir(),
		Namespace: ns, LogDir: logs, NetworkMode: "none",
		Progress: func(e swebench.RowImageEvent) { events = append(events, e) },
	})
	require.NoError(t, err)
	want := []string{family.PolyBenchImage(good.InstanceID, ns, "latest"), "polybench_python_swebox-test__calc-7001"}
	t.Cleanup(func() {
		for _, img := range want {
			assert.NoError(t, c.RemoveImage(context.Background(), img))
		}
	})
	assert.Equal(t, []string{plain.InstanceID}, res.Skipped)
	require.NoError(t, res.Errs[good.InstanceID])
	assert.Equal(t, want, res.Images[good.InstanceID])
	for _, img := range want {
		info, err := c.InspectImage(ctx, img)
		require.NoError(t, err, img)
		assert.Equal(t, good.InstanceID, info.Labels[swebench.LabelInstance])
		assert.Equal(t, "true", info.Labels[sandbox.LabelManaged])
	}
	name, ok := swebench.RowImageName(good, ns, "")
	require.True(t, ok)
	assert.Equal(t, want[0], name)

	var re *swebench.RowImageError
	require.ErrorAs(t, res.Errs[bad.InstanceID], &re)
	assert.ErrorIs(t, res.Errs[bad.InstanceID], imagebuild.ErrImageBuildFailed)
	assert.Equal(t, bad.InstanceID, re.InstanceID)
	assert.Contains(t, re.Step, "RUN echo building && exit 3")
	assert.Contains(t, re.Error(), "row "+bad.InstanceID)
	log, err := os.ReadFile(filepath.Join(logs, bad.InstanceID, "build.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "building")
	exists, err := c.HasImage(ctx, family.PolyBenchImage(bad.InstanceID, ns, "latest"))
	require.NoError(t, err)
	assert.False(t, exists)
	require.Len(t, events, 2)

	cfg := p.Config(t, c, "row-image", []dataset.Instance{good}, []dataset.Prediction{swebenchtest.Pred(good.InstanceID, swebenchtest.Gold)})
	cfg.Repos, cfg.Image, cfg.Namespace, cfg.MaxWorkers = nil, "", ns, 1
	run, err := swebench.Evaluate(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, run.Instances, 1)
	assert.Equal(t, swebench.StatusResolved, run.Instances[0].Status, run.Instances[0].Error)
}
