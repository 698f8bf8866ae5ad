package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// writeTask writes one task directory of a 5.0.2 task repository.
func writeTask(t *testing.T, root, id string, inst dataset.Instance, dockerfile, evalScript string) {
	t.Helper()
	dir := filepath.Join(root, "tasks", id)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	yaml := fmt.Sprintf("instance_id: %s\nrepo: %s\nversion: '0.1'\nbase_commit: %s\nsplit: test\ndatasets: [swebox/Demo]\nimage: %s\nlog_parser: pytest\neval_type: pass_and_fail\n",
		id, inst.Repo, inst.BaseCommit, taskrepo.ExpectedImage(id))
	tests, err := json.Marshal(map[string][]string{"FAIL_TO_PASS": inst.FailToPass, "PASS_TO_PASS": inst.PassToPass})
	require.NoError(t, err)
	for name, text := range map[string]string{
		"task.yaml": yaml, "tests.json": string(tests), "gold.patch": inst.Patch, "test.patch": inst.TestPatch,
		"eval.sh": evalScript, "problem_statement.md": inst.ProblemStatement, "Dockerfile": dockerfile,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
}

// demoTaskRepo writes a task repository of two tasks of the demo
// instance: good builds the demo's checkout at its base commit (copied
// from the task directory, the build context) on the test image; broken's
// build fails.
func demoTaskRepo(t *testing.T, srcDir string, inst dataset.Instance, good, broken string) string {
	t.Helper()
	repoDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repoDir, "sweb.yaml"), []byte("datasets: [swebox/Demo]\n"), 0o644))
	writeTask(t, repoDir, good, inst, "FROM "+testenv.Image()+"\nCOPY repo /testbed\nWORKDIR /testbed\n", demoEvalScript(inst))
	writeTask(t, repoDir, broken, inst, "FROM "+testenv.Image()+"\nRUN exit 3\n", demoEvalScript(inst))
	// The task's checkout at its base commit, which its Dockerfile copies
	// from the task directory (the build context).
	checkout := filepath.Join(repoDir, "tasks", good, "repo")
	for _, args := range [][]string{
		{"clone", "-q", filepath.Join(srcDir, "swebox__demo.git"), checkout},
		{"-C", checkout, "checkout", "-q", inst.BaseCommit},
	} {
		out, err := exec.Command("git", args...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return repoDir
}

// demoEvalScript is an eval.sh of the shape 5.0.2's rows carry, for the
// demo instance.
func demoEvalScript(inst dataset.Instance) string {
	return "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n" +
		"git checkout " + inst.BaseCommit + " tests/test_stats.py\n" +
		"git apply --verbose --reject - <<'EOF_114329324912'\n" + inst.TestPatch + "\nEOF_114329324912\n" +
		": '>>>>> Start Test Output'\npytest -rA tests/test_stats.py\n: '>>>>> End Test Output'\n" +
		"git checkout " + inst.BaseCommit + " tests/test_stats.py\n"
}

// A 5.0.2 task repository, built as `swebench images build <task-repo>`
// builds it (its Dockerfile, its task directory as the context) and
// evaluated as `swebench eval --task-repo` does (every image removed and
// built again first): the gold patch resolves, a no-op does not, and a
// task whose build fails has no published image to fall back to, so it
// ends without a verdict while the other is graded.
func TestTaskRepoBuildAndEvalEndToEnd(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	srcDir, _, inst := demoInstance(t)
	suffix := strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-13:]))
	good, broken := "swebox__tr"+suffix+"-1", "swebox__tr"+suffix+"-2"

	repoDir := demoTaskRepo(t, srcDir, inst, good, broken)

	var names []string
	for _, id := range []string{good, broken} {
		local, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: id, Dockerfile: "x"})
		require.NoError(t, err)
		names = append(names, local.Name, taskrepo.ExpectedImage(id))
	}
	for _, n := range names {
		ok, err := c.HasImage(ctx, n)
		require.NoError(t, err)
		require.False(t, ok, "%s exists before the test", n)
	}
	t.Cleanup(func() {
		for _, n := range names {
			assert.NoError(t, c.RemoveImage(context.Background(), n))
		}
		_, err := testenv.Docker(t, c).ImagesPrune(context.Background(), filters.NewArgs(
			filters.Arg("label", sandbox.LabelSession+"="+c.Session()), filters.Arg("dangling", "true")))
		assert.NoError(t, err)
	})

	t.Run("images build", func(t *testing.T) {
		t.Chdir(t.TempDir())
		var stdout, stderr bytes.Buffer
		code := runImages(ctx, []string{"build", repoDir, "-i", good, "-i", broken, "-j", "2"}, &stdout, &stderr)
		t.Log(stderr.String())
		assert.Equal(t, exitFailure, code, "one of the two fails")
		localGood := names[0]
		assert.Contains(t, stdout.String(), good+"\t"+localGood+"\n")
		assert.Contains(t, stdout.String(), broken+"\timage_build_failed\t")
		ok, err := c.HasImage(ctx, localGood)
		require.NoError(t, err)
		assert.True(t, ok)
		log, err := os.ReadFile(filepath.Join(imagebuild.ImageBuilderDir, strings.ReplaceAll(localGood, ":", "__"), imagebuild.BuildLog))
		require.NoError(t, err)
		assert.Contains(t, string(log), "Image built successfully!")
		log, err = os.ReadFile(filepath.Join(imagebuild.ImageBuilderDir, strings.ReplaceAll(names[2], ":", "__"), imagebuild.BuildLog))
		require.NoError(t, err)
		assert.Contains(t, string(log), "exit 3")
	})

	noop := "diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\nindex 0000000..3b18e51\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+hello\n"
	for _, tc := range []struct {
		name, patch              string
		resolved, unresolved, no []string
	}{
		{"gold", "", []string{good}, nil, []string{broken}},
		{"noop", noop, nil, []string{good}, []string{broken}},
	} {
		t.Run("eval "+tc.name, func(t *testing.T) {
			work := t.TempDir()
			t.Chdir(work)
			preds := "gold"
			if tc.patch != "" {
				var b bytes.Buffer
				for _, id := range []string{good, broken} {
					line, err := json.Marshal(map[string]string{"instance_id": id, "model_name_or_path": "m", "model_patch": tc.patch})
					require.NoError(t, err)
					b.Write(append(line, '\n'))
				}
				preds = "preds.jsonl"
				require.NoError(t, os.WriteFile(preds, b.Bytes(), 0o644))
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{"--task_repo", repoDir, "-p", preds, "--run_id", "tr" + tc.name, "--max_workers", "2"}, nil, &stdout, &stderr)
			t.Log(stderr.String())
			require.Equal(t, exitOK, code)
			assert.Contains(t, stderr.String(), "Building 2 image(s) from "+repoDir+" before evaluating...")
			assert.Contains(t, stderr.String(), "BUILD FAILED for 1 instance(s): "+broken)
			assert.Contains(t, stderr.String(), broken+": build failed and no published image exists; it will error")
			model := "gold"
			if tc.patch != "" {
				model = "m"
			}
			rep := swebenchtest.RunReport(t, filepath.Join(work, model+".tr"+tc.name+".json"))
			assert.Equal(t, tc.resolved, nilIfEmpty(swebenchtest.IDs(rep, "resolved_ids")))
			assert.Equal(t, tc.unresolved, nilIfEmpty(swebenchtest.IDs(rep, "unresolved_ids")))
			assert.Equal(t, tc.no, nilIfEmpty(swebenchtest.IDs(rep, "error_ids")), "the broken task has no verdict")
			meta, err := os.ReadFile(filepath.Join("logs/run_evaluation", "tr"+tc.name, "run.json"))
			require.NoError(t, err)
			assert.Contains(t, string(meta), `"task_repo": "`+repoDir+`"`)
		})
	}
}

// A row whose image is not the name the build makes falls back to the
// published image, as upstream's _build_before_eval: rows naming a
// registry with a port (127.0.0.1:PORT/swebench/...) give the namespace
// "127.0.0.1:PORT" (the part before the first "/"), so the build makes
// 127.0.0.1:PORT/sweb.eval...; the evaluation pulls the rows' images
// from the registry. The good task's image is there (pushed first) and
// resolves with the gold patch; the broken task's is not, so it ends as
// image_build_failed.
func TestTaskRepoFallsBackToThePublishedImage(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	reg := testenv.Registry(t)
	srcDir, _, inst := demoInstance(t)
	suffix := strings.ToLower(strings.NewReplacer(".", "", "_", "-").Replace(c.Session()[len(c.Session())-13:]))
	good, broken := "swebox__fb"+suffix+"-1", "swebox__fb"+suffix+"-2"
	repoDir := demoTaskRepo(t, srcDir, inst, good, broken)
	published := map[string]string{}
	for _, id := range []string{good, broken} {
		yamlPath := filepath.Join(repoDir, "tasks", id, "task.yaml")
		b, err := os.ReadFile(yamlPath)
		require.NoError(t, err)
		published[id] = reg + "/" + taskrepo.ExpectedImage(id)
		require.NoError(t, os.WriteFile(yamlPath, []byte(strings.Replace(string(b), taskrepo.ExpectedImage(id), published[id], 1)), 0o644))
	}
	var cleanup []string
	for _, id := range []string{good, broken} {
		img, err := imagebuild.BeforeEvalImages([]imagebuild.TaskSource{{InstanceID: id, Image: published[id], Dockerfile: "x"}}, "")
		require.NoError(t, err)
		cleanup = append(cleanup, img[0].Name, published[id])
	}
	local := "sweb.eval.x86_64." + good + ":fallback"
	cleanup = append(cleanup, local)
	t.Cleanup(func() {
		for _, n := range cleanup {
			assert.NoError(t, c.RemoveImage(context.Background(), n))
		}
		_, err := testenv.Docker(t, c).ImagesPrune(context.Background(), filters.NewArgs(
			filters.Arg("label", sandbox.LabelSession+"="+c.Session()), filters.Arg("dangling", "true")))
		assert.NoError(t, err)
	})
	// The published image: the good task's, built and pushed, then its
	// local tag removed so that only the registry has it.
	r, err := taskrepo.Open(repoDir)
	require.NoError(t, err)
	tasks, err := r.Load([]string{good})
	require.NoError(t, err)
	img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: good, Dockerfile: tasks[0].Dockerfile, Tag: "fallback", ContextDir: tasks[0].Dir})
	require.NoError(t, err)
	res, err := imagebuild.BuildTasks(ctx, c, imagebuild.TaskBuildRequest{Images: []imagebuild.TaskImage{img}, Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, res.Instances[good].Err)
	require.NoError(t, c.PushImage(ctx, sandbox.PushRequest{Image: local, Ref: published[good]}))
	require.NoError(t, c.RemoveImage(ctx, published[good]))

	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--task_repo", repoDir, "-p", "gold", "--run_id", "fallback"}, nil, &stdout, &stderr)
	t.Log(stderr.String())
	require.Equal(t, exitOK, code)
	assert.Contains(t, stderr.String(), "BUILD FAILED for 2 instance(s): "+good+", "+broken)
	assert.Contains(t, stderr.String(), good+": build failed; FELL BACK to the published image "+published[good])
	assert.Contains(t, stderr.String(), broken+": build failed and no published image exists; it will error")
	rep := swebenchtest.RunReport(t, "gold.fallback.json")
	assert.Equal(t, []string{good}, swebenchtest.IDs(rep, "resolved_ids"))
	assert.Equal(t, []string{broken}, swebenchtest.IDs(rep, "error_ids"))
	outcomes, _ := rep["swebox_outcomes"].(map[string]any)
	assert.Equal(t, "image_build_failed", outcomes[broken])
}

func nilIfEmpty(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
