package main

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// standinDir holds the stand-ins for an image build's downloads (its
// README says what each replaces).
const standinDir = "../../swebench/imagebuild/testdata/standin"

// addTree adds the files under dir to tw under prefix.
func addTree(t *testing.T, tw *tar.Writer, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(info.Mode().Perm() | 0o644), Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	require.NoError(t, err)
}

// A demo instance, filed under a repository of upstream's tables
// (psf/requests 2.4), gets its env and instance images built from
// upstream's own Dockerfiles and setup scripts on a stand-in base image;
// the built instance resolves with the gold patch and not with a no-op.
func TestImagesBuildEndToEnd(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()

	// The demo repository, served where upstream's clone URL leads.
	srcDir := t.TempDir()
	demo, err := buildDemoRepo(demoFS(), srcDir)
	require.NoError(t, err)
	rows, err := dataset.LoadDataset("demo/dataset.jsonl")
	require.NoError(t, err)
	var inst dataset.Instance
	for _, r := range rows {
		if r.InstanceID == "swebox__demo-1" {
			inst = r
		}
	}
	require.NotEmpty(t, inst.InstanceID)
	inst.Repo, inst.Version, inst.InstanceID = "psf/requests", "2.4", "psf__requests-90001"
	inst.EnvironmentSetupCommit = demo.Head

	tag := strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-13:]))
	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos(srcDir)), imagebuild.WithTags("t"+tag, "t"+tag))
	require.NoError(t, err)
	spec, err := p.For(ctx, inst)
	require.NoError(t, err)
	require.Equal(t, "sweb.base.py.x86_64:latest", spec.Base.Name)

	// The stand-in base image, under upstream's base image name.
	if ok, err := c.HasImage(ctx, spec.Base.Name); err != nil || ok {
		require.NoError(t, err)
		t.Skipf("%s exists on this engine and is not this test's; not replacing it", spec.Base.Name)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	addTree(t, tw, standinDir, ".")
	addTree(t, tw, filepath.Join(srcDir, "swebox__demo.git"), "git/psf/requests")
	require.NoError(t, tw.Close())
	cold := time.Now()
	_, err = c.BuildImage(ctx, sandbox.BuildRequest{Context: &buf, Tags: []string{spec.Base.Name}, NetworkMode: "none"})
	require.NoError(t, err)
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
}
