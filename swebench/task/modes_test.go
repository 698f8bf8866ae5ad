package task_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/task"
)

// prebuiltImage builds an image laid out like an official instance image
// for inst: the repository at /testbed (owned by root), with a build
// artifact git ignores, as installs leave. It returns the namespace.
func prebuiltImage(t *testing.T, c *sandbox.Client, d demo, inst dataset.Instance) string {
	t.Helper()
	ctx := context.Background()
	rc, err := repo.New(repo.WithLocalSources(d.repos), repo.WithCacheDir(t.TempDir()))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "testbed")
	_, err = rc.Checkout(ctx, repo.CheckoutRequest{Repo: inst.Repo, Commit: inst.BaseCommit, Dir: dir, SelfContained: true})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "build", "artifact.so"), []byte("built"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("build/\n"), 0o644))

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := de.Info()
		require.NoError(t, err)
		h, err := tar.FileInfoHeader(info, "")
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(filepath.Join("testbed", rel))
		require.NoError(t, tw.WriteHeader(h))
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			_, err = tw.Write(b)
			require.NoError(t, err)
		}
		return nil
	}))
	df := "FROM " + testenv.Image() + "\nCOPY testbed /testbed\nWORKDIR /testbed\n"
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), Typeflag: tar.TypeReg}))
	_, err = tw.Write([]byte(df))
	require.NoError(t, err)
	require.NoError(t, tw.Close())

	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	ref := harness.InstanceImage(inst.InstanceID, ns, harness.DefaultTag)
	_, err = c.BuildImage(ctx, sandbox.BuildRequest{Context: &buf, Tags: []string{ref}, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.RemoveImage(context.Background(), ref)) })
	return ns
}

// TestModes starts, submits and resets a task in each way the evaluator
// prepares /testbed: a bind-mounted checkout, a checkout copied into a
// volume (remote engines), and an official-style instance image; each
// submission equals the evaluator's for the same patch.
func TestModes(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	inst := d.rows[0]
	for _, tc := range []struct {
		name string
		edit func(*swebench.Config)
		// ignored is a file git ignores that Start's /testbed has.
		ignored string
	}{
		{name: "bind"},
		{name: "copy", edit: func(cfg *swebench.Config) { cfg.CopyWorkspace = true }},
		{name: "prebuilt", ignored: "build/artifact.so", edit: func(cfg *swebench.Config) {
			cfg.Mode, cfg.Namespace, cfg.RepoSources = harness.ModePrebuilt, prebuiltImage(t, c, d, inst), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := evalConfig(d, c)
			cfg.InstanceIDs = []string{inst.InstanceID}
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			tasks, err := task.New(ctx, task.Config{Eval: cfg, Dir: t.TempDir(), Feedback: task.FeedbackFull})
			require.NoError(t, err)
			defer tasks.Close()
			env, err := tasks.Start(ctx, inst.InstanceID)
			require.NoError(t, err)
			defer env.Close()
			sb := env.Sandbox()
			assert.Equal(t, inst.BaseCommit, strings.TrimSpace(shell(t, sb, "git rev-parse HEAD")))
			assert.Empty(t, shell(t, sb, "git status --porcelain"))
			if tc.ignored != "" {
				assert.Equal(t, "built", shell(t, sb, "cat "+tc.ignored))
			}
			require.True(t, applyAsAgent(t, env, inst.Patch))
			shell(t, sb, "echo junk > notes.txt; rm -rf build")
			sub, err := env.Submit(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, swebench.OutcomeResolved, sub.Result.Outcome, sub.Result.Error)

			p := sub.Patch
			ecfg := cfg
			ecfg.Predictions = []dataset.Prediction{{InstanceID: inst.InstanceID, ModelNameOrPath: "m", ModelPatch: &p}}
			ecfg.RunID, ecfg.LogDir, ecfg.ReportDir = "modes", t.TempDir(), t.TempDir()
			res, err := swebench.Evaluate(ctx, ecfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			want, err := os.ReadFile(filepath.Join(res.Instances[0].LogDir, "report.json"))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(sub.ReportJSON))

			_, err = env.Reset(ctx)
			require.NoError(t, err)
			assert.NotEqual(t, sb.ID(), env.Sandbox().ID(), "Reset gives a new sandbox")
			assert.Empty(t, shell(t, env.Sandbox(), "git status --porcelain"))
			if tc.ignored != "" {
				assert.Equal(t, "built", shell(t, env.Sandbox(), "cat "+tc.ignored), "Start's ignored files come back")
			}
		})
	}
}
