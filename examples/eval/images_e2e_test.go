package main

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// demoInstance builds the demo repository in a temporary directory and
// returns it with the row of swebox__demo-1.
func demoInstance(t *testing.T) (string, demoRepo, dataset.Instance) {
	t.Helper()
	srcDir := t.TempDir()
	demo, err := buildDemoRepo(demoFS(), srcDir)
	require.NoError(t, err)
	rows, err := dataset.LoadDataset("demo/dataset.jsonl")
	require.NoError(t, err)
	for _, r := range rows {
		if r.InstanceID == "swebox__demo-1" {
			return srcDir, demo, r
		}
	}
	t.Fatal("no swebox__demo-1 in demo/dataset.jsonl")
	return "", demoRepo{}, dataset.Instance{}
}

// A demo instance, filed under a repository of upstream's tables
// (psf/requests 2.4), gets its env and instance images built from
// upstream's own Dockerfiles and setup scripts on a stand-in base image;
// the built instance resolves with the gold patch and not with a no-op.
func TestImagesBuildEndToEnd(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()

	// The demo repository, served where upstream's clone URL leads.
	srcDir, demo, inst := demoInstance(t)
	inst.Repo, inst.Version, inst.InstanceID = "psf/requests", "2.4", "psf__requests-90001"
	inst.EnvironmentSetupCommit = demo.Head

	tag := strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-13:]))
	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos(srcDir)), imagebuild.WithTags("t"+tag, "t"+tag))
	require.NoError(t, err)
	spec, err := p.For(ctx, inst)
	require.NoError(t, err)
	require.Equal(t, "sweb.base.py.x86_64:latest", spec.Base.Name)

	// The stand-in base image, under upstream's base image name.
	// Last of all: the layers a failed build left, which no tag names.
	t.Cleanup(func() {
		_, err := testenv.Docker(t, c).ImagesPrune(context.Background(), filters.NewArgs(
			filters.Arg("label", sandbox.LabelSession+"="+c.Session()), filters.Arg("dangling", "true")))
		assert.NoError(t, err)
	})
	cold := time.Now()
	swebenchtest.StandinBase(t, c, spec.Base.Name, map[string]string{"psf/requests": filepath.Join(srcDir, "swebox__demo.git")})
	baseTime := time.Since(cold)
	t.Cleanup(func() {
		for _, img := range []string{spec.Instance.Name, spec.Env.Name, spec.Base.Name} {
			assert.NoError(t, c.RemoveImage(context.Background(), img))
		}
	})

	dir := t.TempDir()
	build := func() (imagebuild.BuildResult, time.Duration) {
		start := time.Now()
		res, err := imagebuild.Build(ctx, c, imagebuild.BuildRequest{Specs: []imagebuild.Spec{spec}, Dir: dir})
		require.NoError(t, err)
		return res, time.Since(start)
	}
	res, envInstTime := build()
	require.NoError(t, res.Instances[inst.InstanceID].Err)
	outcomes := func(res imagebuild.BuildResult) []imagebuild.Outcome {
		var out []imagebuild.Outcome
		for _, e := range res.Events {
			out = append(out, e.Outcome)
		}
		return out
	}
	require.Equal(t, []imagebuild.Outcome{imagebuild.Cached, imagebuild.Built, imagebuild.Built}, outcomes(res))
	for _, tier := range []imagebuild.Tier{spec.Env, spec.Instance} {
		got, err := os.ReadFile(filepath.Join(dir, tier.Dir, "Dockerfile"))
		require.NoError(t, err)
		assert.Equal(t, tier.Dockerfile, string(got), "the Dockerfile built is upstream's")
		log, err := os.ReadFile(filepath.Join(dir, tier.Dir, imagebuild.BuildLog))
		require.NoError(t, err)
		assert.Contains(t, string(log), "Image built successfully!")
	}
	envLog, _ := os.ReadFile(filepath.Join(dir, spec.Env.Dir, imagebuild.BuildLog))
	assert.Contains(t, string(envLog), "stand-in conda: create env testbed", "setup_env.sh ran on the stand-ins")

	res, cachedTime := build()
	assert.Equal(t, []imagebuild.Outcome{imagebuild.Cached, imagebuild.Cached, imagebuild.Cached}, outcomes(res))
	require.NoError(t, c.RemoveImage(ctx, spec.Instance.Name))
	res, instTime := build()
	assert.Equal(t, []imagebuild.Outcome{imagebuild.Cached, imagebuild.Cached, imagebuild.Built}, outcomes(res))
	t.Logf("stand-in base %s; env+instance cold %s; all cached %s; instance on a cached env %s",
		baseTime.Round(100*time.Millisecond), envInstTime.Round(100*time.Millisecond),
		cachedTime.Round(time.Millisecond), instTime.Round(100*time.Millisecond))

	// The command with --namespace none, as a user of the official harness
	// runs it: the images exist, so nothing is rebuilt; a second instance
	// whose base_commit the repository lacks fails to build and ends as
	// image_build_failed, naming its build log, while the first resolves.
	t.Run("namespace none", func(t *testing.T) {
		work := t.TempDir()
		t.Chdir(work)
		broken := inst
		broken.InstanceID, broken.BaseCommit = "psf__requests-90002", strings.Repeat("f", 40)
		var rows bytes.Buffer
		for _, r := range []dataset.Instance{inst, broken} {
			b, err := r.MarshalJSON()
			require.NoError(t, err)
			rows.Write(append(b, '\n'))
		}
		require.NoError(t, os.WriteFile("dataset.jsonl", rows.Bytes(), 0o644))
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"-d", "dataset.jsonl", "-p", "gold", "--run_id", "nsnone", "-n", "none",
			"--instance_image_tag", "t" + tag, "--env_image_tag", "t" + tag, "--repos", srcDir}, nil, &stdout, &stderr)
		t.Log(stderr.String())
		require.Equal(t, exitOK, code)
		assert.Contains(t, stderr.String(), "instances sweb.eval.x86_64.psf__requests-90002:t"+tag+": FAILED")
		rep := swebenchtest.RunReport(t, filepath.Join(work, "gold.nsnone.json"))
		assert.Equal(t, []string{inst.InstanceID}, swebenchtest.IDs(rep, "resolved_ids"))
		assert.Equal(t, []string{broken.InstanceID}, swebenchtest.IDs(rep, "error_ids"))
		outcomes, _ := rep["swebox_outcomes"].(map[string]any)
		assert.Equal(t, "image_build_failed", outcomes[broken.InstanceID], "outcomes %v", rep["swebox_outcomes"])
		log, err := os.ReadFile(filepath.Join("logs/build_images/instances", "sweb.eval.x86_64.psf__requests-90002__t"+tag, imagebuild.BuildLog))
		require.NoError(t, err)
		assert.Contains(t, string(log), "git reset --hard "+broken.BaseCommit)
	})

	// The instance image, evaluated as a locally built official image.
	gold := inst.Patch
	noop := "diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..3b18e51\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+hello\n"
	for _, tc := range []struct {
		name, patch string
		want        swebench.Status
	}{{"gold", gold, swebench.StatusResolved}, {"noop", noop, swebench.StatusUnresolved}} {
		t.Run(tc.name, func(t *testing.T) {
			patch := tc.patch
			cfg := swebench.Config{
				Dataset:     []dataset.Instance{inst},
				Predictions: []dataset.Prediction{{InstanceID: inst.InstanceID, ModelNameOrPath: "m", ModelPatch: &patch}},
				RunID:       "images-" + tc.name, LogDir: filepath.Join(dir, "logs"), ReportDir: dir,
				Mode: harness.ModePrebuilt, Namespace: swebench.NoNamespace, ImageTag: "t" + tag,
				Sandboxes: []*sandbox.Client{c},
			}
			out, err := swebench.Evaluate(ctx, cfg)
			require.NoError(t, err)
			require.Len(t, out.Instances, 1)
			assert.Equal(t, tc.want, out.Instances[0].Status, out.Instances[0].Error)
		})
	}

	// --cache_level env with --clean: the instance image goes after the
	// run, although it existed before; env and base images stay. An
	// instance image of another instance, which this run neither built nor
	// used, stays too: swebox removes only the run's own images (upstream's
	// clean_images would remove every sweb.eval image on the engine).
	t.Run("cache level", func(t *testing.T) {
		t.Chdir(t.TempDir())
		other := "sweb.eval.x86_64.psf__requests-90009:t" + tag
		var octx bytes.Buffer
		otw := tar.NewWriter(&octx)
		df := "FROM " + testenv.Image() + "\n"
		require.NoError(t, otw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}))
		_, err := otw.Write([]byte(df))
		require.NoError(t, err)
		require.NoError(t, otw.Close())
		_, err = c.BuildImage(ctx, sandbox.BuildRequest{Context: &octx, Tags: []string{other}})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, c.RemoveImage(context.Background(), other)) })
		info, err := c.InspectImage(ctx, other)
		require.NoError(t, err)
		require.Equal(t, c.Session(), info.Labels[sandbox.LabelSession], "the image is labelled ours")
		b, err := inst.MarshalJSON()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("dataset.jsonl", append(b, '\n'), 0o644))
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"-d", "dataset.jsonl", "-p", "gold", "--run_id", "clean", "-n", "none",
			"--instance_image_tag", "t" + tag, "--env_image_tag", "t" + tag, "--cache_level", "env", "--clean", "true"}, nil, &stdout, &stderr)
		require.Equal(t, exitOK, code, stderr.String())
		assert.NotContains(t, stderr.String(), "notice: --cache_level", "the flag is honoured")
		for img, want := range map[string]bool{spec.Instance.Name: false, spec.Env.Name: true, spec.Base.Name: true, other: true} {
			ok, err := c.HasImage(ctx, img)
			require.NoError(t, err)
			assert.Equal(t, want, ok, "%s present after the run", img)
		}
	})
}
