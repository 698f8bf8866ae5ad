package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// taskRepoRows are the rows of `eval --task_repo`, as 5.0.2's
// load_instances reads them: the tasks of the split, or the -i ids from
// any split.
func taskRepoRows(o runOptions) ([]taskrepo.Task, error) {
	r, err := taskrepo.Open(o.TaskRepo)
	if err != nil {
		return nil, err
	}
	return r.ForEval(o.Split, o.InstanceIDs)
}

// toBuild are the tasks 5.0.2's get_dataset_from_preds passes to
// _build_before_eval: those with a non-empty prediction (every one for
// gold) and no report.json yet under the run.
func toBuild(o runOptions, tasks []taskrepo.Task, preds []dataset.Prediction) []taskrepo.Task {
	model := map[string]string{}
	for _, t := range tasks {
		if o.PredictionsPath == "gold" {
			model[t.ID] = "gold"
		}
	}
	for _, p := range preds {
		if p.ModelPatch != nil && *p.ModelPatch != "" {
			model[p.InstanceID] = p.ModelNameOrPath
		} else {
			delete(model, p.InstanceID)
		}
	}
	var out []taskrepo.Task
	for _, t := range tasks {
		m, ok := model[t.ID]
		if !ok {
			continue
		}
		report := filepath.Join(o.LogDir, "run_evaluation", o.RunID, strings.ReplaceAll(m, "/", "__"), t.ID, "report.json")
		if _, err := os.Stat(report); err == nil {
			continue
		}
		out = append(out, t)
	}
	return out
}

// buildBeforeEval is 5.0.2's _build_before_eval: every task's image is
// removed and built again from its Dockerfile (so that a stale image cannot
// pass for a build), tagged for the namespace and tag of the first row's
// image; a row whose image the build did not produce falls back to its
// published image (pulled), and without one it ends as image_build_failed
// (the error returned for it in failed) while the others run.
func buildBeforeEval(ctx context.Context, w io.Writer, c *sandbox.Client, repo string, tasks []taskrepo.Task, maxWorkers int) (failed map[string]error, err error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	srcs := make([]imagebuild.TaskSource, len(tasks))
	for i, t := range tasks {
		srcs[i] = imagebuild.TaskSource{InstanceID: t.ID, Image: t.Instance.Image, Dockerfile: t.Dockerfile, ContextDir: t.Dir}
	}
	imgs, err := imagebuild.BeforeEvalImages(srcs, "")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "Building %d image(s) from %s before evaluating...\n", len(srcs), repo)
	res, err := imagebuild.BuildTasks(ctx, c, imagebuild.TaskBuildRequest{
		Images: imgs, ForceRebuild: true, MaxWorkers: maxWorkers,
		Progress: func(e imagebuild.Event) { fmt.Fprintln(w, progressLine(e)) },
	})
	if err != nil {
		return nil, fmt.Errorf("build task images: %w", err)
	}
	var missing []imagebuild.TaskSource
	for _, s := range srcs {
		ok, err := c.HasImage(ctx, s.Image)
		if err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		fmt.Fprintf(w, "Built %d image(s) locally; none pulled.\n", len(srcs))
		return nil, nil
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i].InstanceID < missing[j].InstanceID })
	var ids []string
	for _, m := range missing {
		ids = append(ids, m.InstanceID)
	}
	fmt.Fprintf(w, "BUILD FAILED for %d instance(s): %s\n", len(missing), strings.Join(ids, ", "))
	for _, m := range missing {
		if err := c.EnsureImage(ctx, sandbox.EnsureImageRequest{Image: m.Image}); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fmt.Fprintf(w, "  %s: build failed and no published image exists; it will error (%v)\n", m.InstanceID, err)
			if failed == nil {
				failed = map[string]error{}
			}
			be := res.Instances[m.InstanceID].Err
			if be == nil { // built, but under another name than the row's
				be = &imagebuild.BuildError{Image: m.Image, Err: fmt.Errorf("the build made another image than the row names, and pulling it failed: %w", err)}
			}
			failed[m.InstanceID] = be
			continue
		}
		fmt.Fprintf(w, "  %s: build failed; FELL BACK to the published image %s\n", m.InstanceID, m.Image)
	}
	return failed, nil
}

// taskImagesOptions are the flags of `eval images build TASK_REPO`, as
// 5.0.2's `swebench images build`.
type taskImagesOptions struct {
	repo      string
	datasets  []string
	ids       []string
	workers   int
	force     bool
	namespace string
	tag       string
	dryRun    bool
	arch      string
	dir       string
	push      bool
	hostArch  string
}

// buildTaskImages builds a task repository's images as 5.0.2's
// prepare_images does: the guard (the repository's check) first, then
// the selected tasks' images that do not exist (all with --force_rebuild).
func buildTaskImages(ctx context.Context, o taskImagesOptions, stdout, stderr io.Writer) error {
	r, err := taskrepo.Open(o.repo)
	if err != nil {
		return err
	}
	if err := r.Check(); err != nil {
		return err
	}
	tasks, err := r.Select(o.ids, o.datasets)
	if err != nil {
		return err
	}
	arch, err := imagebuild.TaskArch(o.hostArch, o.arch)
	if err != nil {
		return err
	}
	var imgs []imagebuild.TaskImage
	for _, t := range tasks {
		img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: t.ID, Dockerfile: t.Dockerfile, Namespace: o.namespace, Tag: o.tag, Arch: arch, ContextDir: t.Dir})
		if err != nil {
			return err
		}
		imgs = append(imgs, img)
	}
	if o.dryRun {
		dirs, err := imagebuild.WriteTaskFiles(o.dir, imgs)
		for _, d := range dirs {
			fmt.Fprintln(stdout, d)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "DRY RUN MODE: wrote the Dockerfiles of %d images (nothing built)\n", len(dirs))
		return nil
	}
	c, err := sandbox.New()
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := imagebuild.BuildTasks(ctx, c, imagebuild.TaskBuildRequest{
		Images: imgs, Dir: o.dir, ForceRebuild: o.force, MaxWorkers: o.workers,
		Progress: func(e imagebuild.Event) { fmt.Fprintln(stderr, progressLine(e)) },
	})
	if err != nil {
		return err
	}
	failed := 0
	for _, img := range imgs {
		ir := res.Instances[img.InstanceID]
		if ir.Err == nil && o.push {
			if err := c.PushImage(ctx, sandbox.PushRequest{Image: img.Name, Ref: img.Name}); err != nil {
				ir.Err = &imagebuild.PushError{Image: img.Name, Ref: img.Name, Err: err}
			} else {
				fmt.Fprintln(stderr, progressLine(imagebuild.Event{Kind: imagebuild.KindPush, Image: img.Name, Outcome: imagebuild.Pushed}))
			}
		}
		if ir.Err != nil {
			failed++
			outcome := "image_build_failed"
			if errors.Is(ir.Err, imagebuild.ErrPushFailed) {
				outcome = "image_push_failed"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%v\n", img.InstanceID, outcome, ir.Err)
			continue
		}
		fmt.Fprintf(stdout, "%s\t%s\n", img.InstanceID, img.Name)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d instances have no image (see above)", failed, len(imgs))
	}
	return nil
}

// hostArch is the architecture this program runs on, in Docker's terms.
func hostArch() string { return runtime.GOARCH }
