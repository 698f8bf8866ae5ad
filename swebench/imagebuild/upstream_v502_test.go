package imagebuild_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// goldenV502 is testdata/golden/v502/taskrepo.json, written by
// testdata/upstream/generate_v502.py with SWE-bench 5.0.2's own code run on
// testdata/taskrepo.
type goldenV502 struct {
	Check          []string            `json:"check"`
	Select         map[string][]string `json:"select"`
	LoadInstances  map[string][]string `json:"load_instances"`
	Rows           map[string]map[string]any
	ImagesBuild    []v502DryRun     `json:"images_build"`
	ARM64          []v502Spec       `json:"arm64"`
	BuildBeforeEva []v502BeforeEval `json:"build_before_eval"`
}

type v502Spec struct {
	InstanceID   string  `json:"instance_id"`
	Name         string  `json:"name"`
	Platform     string  `json:"platform"`
	Arch         string  `json:"arch"`
	FilesafeName string  `json:"filesafe_name"`
	Dockerfile   string  `json:"dockerfile"`
	ContextDir   *string `json:"context_dir"`
}

type v502DryRun struct {
	Namespace   *string           `json:"namespace"`
	Tag         string            `json:"tag"`
	InstanceIDs []string          `json:"instance_ids"`
	Datasets    []string          `json:"datasets"`
	Specs       []v502Spec        `json:"specs"`
	Files       map[string]string `json:"files"`
	Logs        []string          `json:"logs"`
}

type v502BeforeEval struct {
	Rows []struct {
		InstanceID string `json:"instance_id"`
		Image      string `json:"image"`
	} `json:"rows"`
	Published []string `json:"published"`
	Builds    []struct {
		ForceRebuild bool       `json:"force_rebuild"`
		MaxWorkers   int        `json:"max_workers"`
		Specs        []v502Spec `json:"specs"`
	} `json:"builds"`
	Pulls []string `json:"pulls"`
}

const taskRepoDir = "testdata/taskrepo"

func loadGoldenV502(t *testing.T) goldenV502 {
	t.Helper()
	data, err := os.ReadFile("testdata/golden/v502/taskrepo.json")
	require.NoError(t, err)
	var g goldenV502
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.ImagesBuild)
	return g
}

func ids(tasks []taskrepo.Task) []string {
	out := []string{}
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return out
}

// specOf is what Go plans for an upstream ImageSpec's arguments.
func checkSpec(t *testing.T, got imagebuild.TaskImage, want v502Spec) {
	t.Helper()
	assert.Equal(t, want.Name, got.Name, "name")
	assert.Equal(t, want.Platform, got.Platform, "platform")
	assert.Equal(t, want.Arch, got.Arch, "arch")
	assert.Equal(t, "logs/image_builder/"+want.FilesafeName, got.Dir, "directory")
	assert.Equal(t, want.Dockerfile, got.Dockerfile, "Dockerfile")
	if want.ContextDir != nil {
		assert.Equal(t, filepath.Join(taskRepoDir, *want.ContextDir), got.ContextDir, "context")
	}
}

// TestUpstreamV502TaskRepo: reading the task repository, selecting its
// tasks and planning their images (`swebench images build <task-repo>
// --dry-run`, ImageSpec for arm64, _build_before_eval) give what SWE-bench
// 5.0.2's own code gives, and the dry run's files are byte for byte its
// files, under the same paths.
func TestUpstreamV502TaskRepo(t *testing.T) {
	g := loadGoldenV502(t)
	r, err := taskrepo.Open(taskRepoDir)
	require.NoError(t, err)

	t.Run("check", func(t *testing.T) {
		require.Empty(t, g.Check, "upstream finds the fixture well formed")
		assert.NoError(t, r.Check())
	})
	t.Run("select", func(t *testing.T) {
		all, err := r.Select(nil, nil)
		require.NoError(t, err)
		assert.Equal(t, g.Select["all"], ids(all))
		lite, err := r.Select(nil, []string{"swebox/Demo_Lite"})
		require.NoError(t, err)
		assert.Equal(t, g.Select["dataset swebox/Demo_Lite"], ids(lite))
		named, err := r.Select([]string{"swebox__demo-3", "swebox__demo-1"}, nil)
		require.NoError(t, err)
		assert.Equal(t, g.Select["ids swebox__demo-3 swebox__demo-1"], ids(named))
		for split, want := range g.LoadInstances {
			got, err := r.ForEval(split, nil)
			require.NoError(t, err)
			assert.Equal(t, want, ids(got), "split %s", split)
		}
	})
	t.Run("rows", func(t *testing.T) {
		tasks, err := r.Load(nil)
		require.NoError(t, err)
		require.Len(t, tasks, len(g.Rows))
		for _, task := range tasks {
			want := g.Rows[task.ID]
			in := task.Instance
			for k, got := range map[string]any{
				"instance_id": in.InstanceID, "repo": in.Repo, "base_commit": in.BaseCommit, "version": in.Version,
				"patch": in.Patch, "test_patch": in.TestPatch, "eval_script": in.EvalScript,
				"problem_statement": in.ProblemStatement, "hints_text": in.HintsText, "image": in.Image,
				"log_parser": in.LogParser, "eval_type": in.EvalType, "created_at": in.CreatedAt,
				"environment_setup_commit": in.EnvironmentSetupCommit, "split": task.Split,
			} {
				assert.Equal(t, want[k], got, "%s %s", task.ID, k)
			}
			assert.Equal(t, want["FAIL_TO_PASS"], toAny(in.FailToPass), task.ID)
			assert.Equal(t, want["PASS_TO_PASS"], toAny(in.PassToPass), task.ID)
			assert.Equal(t, want["datasets"], toAny(task.Datasets), task.ID)
		}
	})
	for _, run := range g.ImagesBuild {
		ns := ""
		if run.Namespace != nil {
			ns = *run.Namespace
		}
		t.Run("images build ns="+ns+" "+run.Tag, func(t *testing.T) {
			tasks, err := r.Select(run.InstanceIDs, run.Datasets)
			require.NoError(t, err)
			require.Len(t, tasks, len(run.Specs))
			var imgs []imagebuild.TaskImage
			for i, task := range tasks {
				img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{
					InstanceID: task.ID, Dockerfile: task.Dockerfile, Namespace: ns, Tag: run.Tag, ContextDir: task.Dir})
				require.NoError(t, err)
				checkSpec(t, img, run.Specs[i])
				imgs = append(imgs, img)
			}
			dir := t.TempDir()
			_, err = imagebuild.WriteTaskFiles(dir, imgs)
			require.NoError(t, err)
			got := map[string]string{}
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				got[filepath.ToSlash(rel)] = string(b)
				return err
			}))
			assert.Equal(t, run.Files, got, "the dry run's files, byte for byte, under upstream's paths")
			var logs []string
			for _, img := range imgs {
				logs = append(logs, img.Dir+"/"+imagebuild.BuildLog)
			}
			sort.Strings(logs)
			assert.Equal(t, run.Logs, logs, "build logs where upstream writes them")
		})
	}
	t.Run("arm64", func(t *testing.T) {
		for _, want := range g.ARM64 {
			ns := ""
			if want.Name[:5] != "sweb." {
				ns = "swebench"
			}
			img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: want.InstanceID, Dockerfile: want.Dockerfile, Namespace: ns, Arch: imagebuild.ArchARM64})
			require.NoError(t, err)
			checkSpec(t, img, want)
		}
	})
	for i, be := range g.BuildBeforeEva {
		t.Run("build before eval "+be.Rows[0].Image, func(t *testing.T) {
			var rows []imagebuild.TaskSource
			for _, row := range be.Rows {
				tasks, err := r.Load([]string{row.InstanceID})
				require.NoError(t, err)
				rows = append(rows, imagebuild.TaskSource{InstanceID: row.InstanceID, Image: row.Image, Dockerfile: tasks[0].Dockerfile, ContextDir: tasks[0].Dir})
			}
			imgs, err := imagebuild.BeforeEvalImages(rows, "")
			require.NoError(t, err)
			require.Len(t, be.Builds, 1)
			assert.True(t, be.Builds[0].ForceRebuild, "upstream always rebuilds")
			require.Len(t, imgs, len(be.Builds[0].Specs))
			var fallback []string
			for j, img := range imgs {
				checkSpec(t, img, be.Builds[0].Specs[j])
				if img.Name != rows[j].Image {
					fallback = append(fallback, rows[j].Image)
				}
			}
			// The stand-in engine built nothing, so upstream pulled every
			// row's image; with a real build, only those not built.
			assert.Equal(t, be.Pulls, func() []string {
				var all []string
				for _, r := range rows {
					all = append(all, r.Image)
				}
				return all
			}())
			if i == 1 {
				assert.Equal(t, be.Pulls, fallback, "a registry with a port: the names built are not the rows', so upstream falls back to pulling every one")
			} else {
				assert.Empty(t, fallback, "the names built are the rows'")
			}
		})
	}
}

func toAny(xs []string) []any {
	out := []any{}
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}
