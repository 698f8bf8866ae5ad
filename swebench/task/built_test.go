package task_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/task"
)

// TestBuilt starts a task from an instance image built as the official
// harness builds it with --namespace none (upstream's Dockerfiles and setup
// scripts on the stand-in base image of swebench/imagebuild/testdata/standin,
// the demo repository filed as psf/requests 2.4): /testbed is at
// base_commit, the gold patch applied through the sandbox resolves, a
// change that touches no code does not, and each verdict and report.json
// equal swebench.Evaluate's for the same patch in the same mode. The
// images are built once, by task.New; Evaluate finds them cached.
func TestBuilt(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	ctx := context.Background()

	inst := d.rows[0]
	gitDir := filepath.Join(d.repos, strings.Replace(inst.Repo, "/", "__", 1)+".git")
	r, err := git.PlainOpen(gitDir)
	require.NoError(t, err)
	head, err := r.Head()
	require.NoError(t, err)
	inst.Repo, inst.Version, inst.InstanceID = "psf/requests", "2.4", "psf__requests-90011"
	inst.EnvironmentSetupCommit = head.Hash().String()

	// Every image this test builds carries c's session label; they go at
	// the end, dangling layers of a failed build included.
	t.Cleanup(func() {
		api := testenv.Docker(t, c)
		imgs, err := api.ImageList(context.Background(), image.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+c.Session()))})
		require.NoError(t, err)
		for _, img := range imgs {
			_, err := api.ImageRemove(context.Background(), img.ID, image.RemoveOptions{Force: true, PruneChildren: true})
			if err != nil && !strings.Contains(err.Error(), "No such image") {
				assert.NoError(t, err)
			}
		}
	})
	swebenchtest.StandinBase(t, c, "sweb.base.py.x86_64:latest", map[string]string{inst.Repo: gitDir})

	tag := "t" + strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-13:]))
	cfg := evalConfig(d, c)
	cfg.Dataset, cfg.RepoSources = []dataset.Instance{inst}, nil
	cfg.Mode, cfg.Namespace, cfg.ImageTag = harness.ModePrebuilt, swebench.NoNamespace, tag
	cfg.BuildImages = &swebench.ImageBuild{
		Files: imagebuild.LocalRepos(d.repos), EnvTag: tag, Dir: t.TempDir(),
		// The instance image stays for Evaluate; the cleanup removes it.
		CacheLevel: imagebuild.CacheInstance,
	}
	var (
		mu    sync.Mutex
		built []imagebuild.Event
	)
	cfg.BuildImages.Progress = func(e imagebuild.Event) { mu.Lock(); built = append(built, e); mu.Unlock() }
	tasks, err := task.New(ctx, task.Config{Eval: cfg, Dir: t.TempDir(), Feedback: task.FeedbackFull})
	require.NoError(t, err)
	defer func() { assert.NoError(t, tasks.Close()) }()
	require.NotEmpty(t, built, "task.New built the images")
	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer func() { assert.NoError(t, env.Close()) }()
	sb := env.Sandbox()
	// upstream's setup_repo.sh ends with `git commit --allow-empty -am
	// SWE-bench` over base_commit, as the evaluator's sandbox has it too.
	assert.Equal(t, inst.BaseCommit+"\nSWE-bench", strings.TrimSpace(shell(t, sb, "git rev-parse HEAD^ && git log -1 --format=%s")))
	assert.Empty(t, shell(t, sb, "git status --porcelain"))

	notes := filepath.Join(t.TempDir(), "NOTES.txt")
	require.NoError(t, os.WriteFile(notes, []byte("hello\n"), 0o644))
	for _, tc := range []struct {
		name string
		act  func(t *testing.T)
		want swebench.Status
	}{
		{"gold", func(t *testing.T) { require.True(t, applyAsAgent(t, env, inst.Patch)) }, swebench.StatusResolved},
		{"noop", func(t *testing.T) {
			_, err := env.Sandbox().CopyIn(ctx, sandbox.CopyInRequest{HostPath: notes, Dest: "/testbed"})
			require.NoError(t, err)
		}, swebench.StatusUnresolved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.act(t)
			diff, err := env.Diff(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, diff)
			sub, err := env.Submit(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, diff, sub.Patch)
			assert.Equal(t, tc.want, sub.Result.Status, sub.Result.Error)

			built = nil
			p := sub.Patch
			ecfg := cfg
			ecfg.Predictions = []dataset.Prediction{{InstanceID: inst.InstanceID, ModelNameOrPath: "m", ModelPatch: &p}}
			ecfg.RunID, ecfg.LogDir, ecfg.ReportDir = "built-"+tc.name, t.TempDir(), t.TempDir()
			res, err := swebench.Evaluate(ctx, ecfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			assert.Equal(t, res.Instances[0].Status, sub.Result.Status)
			assert.Equal(t, res.Instances[0].Outcome, sub.Result.Outcome)
			want, err := os.ReadFile(filepath.Join(res.Instances[0].LogDir, "report.json"))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(sub.ReportJSON))
			for _, e := range built {
				assert.Equal(t, imagebuild.Cached, e.Outcome, "%s is reused", e.Image)
			}

			before := env.Sandbox().ID()
			_, err = env.Reset(ctx)
			require.NoError(t, err)
			assert.NotEqual(t, before, env.Sandbox().ID(), "Reset gives a new sandbox")
			assert.Empty(t, shell(t, env.Sandbox(), "git status --porcelain"))
		})
	}
}
