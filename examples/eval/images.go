package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// imagesOptions are the flags of `eval images build`.
type imagesOptions struct {
	datasetNames        []string
	namespace           string
	split               string
	ids                 []string
	repos               []string
	dryRun              bool
	maxWorkers          int
	forceRebuild        bool
	envTag, instanceTag string
	arch                string
	dir                 string
	push                string
}

// runImages builds the images of instances as the official harness builds
// them with --namespace none (base, env, instance), or with --dry_run
// writes their files only.
func runImages(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "build" {
		fmt.Fprintln(stderr, "eval images: want 'eval images build ...'\nRun 'eval images build -h' for the flags.")
		return exitUsage
	}
	fs := flag.NewFlagSet("eval images build", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := imagesOptions{split: "test", maxWorkers: 4, envTag: "latest", instanceTag: "latest", arch: imagebuild.ArchX86_64, dir: "."}
	for _, n := range []string{"dataset_name", "d", "dataset"} {
		fs.Var((*stringListValue)(&o.datasetNames), n, "dataset: a Hugging Face name or alias, a .json/.jsonl/.parquet file, or a directory; with TASK_REPO: only the tasks of these datasets (repeatable), as 5.0.2's -d")
	}
	for _, n := range []string{"namespace", "n"} {
		fs.StringVar(&o.namespace, n, "", "with TASK_REPO: registry namespace the images are named for, as 5.0.2's -n (default none: local names)")
	}
	for _, n := range []string{"split", "s"} {
		fs.StringVar(&o.split, n, o.split, "split to read")
	}
	for _, n := range []string{"instance_ids", "i"} {
		fs.Var((*idListValue)(&o.ids), n, "instances whose images to build, space- or comma-separated; repeatable; default all")
	}
	fs.Var((*stringListValue)(&o.repos), "repos", "directory of local repositories (owner/name or owner__name, bare or not) read for requirements files and environment.yml before GitHub; repeatable")
	for _, n := range []string{"dry_run", "dry-run"} {
		fs.Var((*boolValue)(&o.dryRun), n, "write the Dockerfiles and setup scripts under logs/build_images/ (TASK_REPO: the Dockerfiles under logs/image_builder/) without building")
	}
	for _, n := range []string{"max_workers", "j", "workers"} {
		fs.IntVar(&o.maxWorkers, n, o.maxWorkers, "env and instance images built at once (<= 0: one at a time)")
	}
	for _, n := range []string{"force_rebuild", "force-rebuild"} {
		fs.Var((*boolValue)(&o.forceRebuild), n, "remove and rebuild the images even if they exist")
	}
	fs.StringVar(&o.envTag, "env_image_tag", o.envTag, "tag of env images")
	for _, n := range []string{"instance_image_tag", "tag"} {
		fs.StringVar(&o.instanceTag, n, o.instanceTag, "tag of instance images")
	}
	fs.StringVar(&o.arch, "arch", o.arch, "x86_64 (what v4.1.0 and 5.0.2 build on every host, emulated on arm64) or arm64 (native arm64 images named arm64)")
	fs.StringVar(&o.dir, "dir", o.dir, "directory that receives logs/build_images/")
	fs.StringVar(&o.push, "push", "", "push each instance image to the registry namespace `NS` (e.g. registry.local:5000/swebench), under its published name "+harness.InstanceImage("<id>", "NS", "<tag>")+", which `eval --namespace NS` pulls")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: eval images build -d DATASET [-i IDS] [--repos DIR] [--dry_run] [--max_workers N] [--force_rebuild]\n"+
			"       eval images build TASK_REPO [-d DATASET]... [-i ID]... [-j N] [--force-rebuild] [-n NS] [--tag TAG] [--dry-run] [--push]\n\n"+
			"Builds the base, env and instance images of the instances as SWE-bench v4.1.0 builds them with\n"+
			"--namespace none: the same names, Dockerfiles and setup scripts, and build logs under\n"+
			"logs/build_images/{base,env,instances}/<image with ':' -> '__'>/. With --dry_run only the files are written.\n\n"+
			"With a SWE-bench 5.0.2 task repository (sweb.yaml, tasks/<id>/) it builds, as 5.0.2's `swebench images build`,\n"+
			"each selected task's Dockerfile with its task directory as the context, named "+harness.TaskImage("<id>", "", "<tag>", imagebuild.ArchX86_64)+"\n"+
			"(under -n: "+harness.TaskImage("<id>", "<NS>", "<tag>", imagebuild.ArchX86_64)+", lower case) for linux/amd64, files and logs under logs/image_builder/<name>/;\n"+
			"the repository is checked first. --push pushes each image under that name (give -n REGISTRY/NS).\n\n"+
			"A row that carries its own Dockerfile (SWE-PolyBench's) gets its image built from it, as its harness builds\n"+
			"one, over a checkout of the repository at base_commit (--repos first, then GitHub), named as eval names the\n"+
			"row's image (the family's namespace, --instance_image_tag) and as the harness does (polybench_<language>_<id>);\n"+
			"build logs under logs/build_images/rows/<id>/build.log (--dry_run: the Dockerfile there).")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, normalizeArgs(args[1:]))
	switch {
	case err != nil:
		return flagFailure("images build", err, fs, stdout, stderr)
	case len(pos) > 1:
		return flagFailure("images build", fmt.Errorf("unexpected argument %q", pos[1]), fs, stdout, stderr)
	case len(pos) == 1:
		return runTaskImages(ctx, o, pos[0], fs, stdout, stderr)
	case len(o.datasetNames) == 0:
		return flagFailure("images build", errors.New("--dataset_name is required"), fs, stdout, stderr)
	case len(o.datasetNames) > 1:
		return flagFailure("images build", errors.New("--dataset_name names one dataset (several select datasets of a TASK_REPO)"), fs, stdout, stderr)
	case o.namespace != "":
		return flagFailure("images build", errors.New("-n/--namespace names task repository images; these are built under upstream's local names (push them with --push REGISTRY/NS)"), fs, stdout, stderr)
	case o.push != "" && o.dryRun:
		return flagFailure("images build", errors.New("--push and --dry_run exclude each other: a dry run builds nothing to push"), fs, stdout, stderr)
	}
	if err := buildImages(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "eval images build: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// runTaskImages is `eval images build TASK_REPO`.
func runTaskImages(ctx context.Context, o imagesOptions, repo string, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, n := range []string{"repos", "env_image_tag", "split", "s"} {
		if set[n] {
			return flagFailure("images build", fmt.Errorf("--%s does not apply to a task repository", n), fs, stdout, stderr)
		}
	}
	to := taskImagesOptions{repo: repo, datasets: o.datasetNames, ids: o.ids, workers: o.maxWorkers, force: o.forceRebuild,
		namespace: o.namespace, tag: o.instanceTag, dryRun: o.dryRun, dir: o.dir, hostArch: hostArch()}
	if set["arch"] {
		to.arch = o.arch
	}
	if swebench.IsNoNamespace(to.namespace) {
		to.namespace = ""
	}
	if o.push != "" {
		if to.namespace != "" && to.namespace != o.push {
			return flagFailure("images build", fmt.Errorf("--push %s and -n %s: a task image is pushed under its own name; give one", o.push, to.namespace), fs, stdout, stderr)
		}
		to.namespace, to.push = o.push, true
	}
	if to.push && to.dryRun {
		return flagFailure("images build", errors.New("--push and --dry_run exclude each other: a dry run builds nothing to push"), fs, stdout, stderr)
	}
	if err := buildTaskImages(ctx, to, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "eval images build: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func buildImages(ctx context.Context, o imagesOptions, stdout, stderr io.Writer) error {
	rows, err := loadRows(ctx, o.datasetNames[0], o.split, "", stderr)
	if err != nil {
		return err
	}
	sel, err := dataset.Select(rows, nil, o.ids)
	if err != nil {
		return err
	}
	var files imagebuild.Files = imagebuild.GitHub(nil, "")
	if len(o.repos) > 0 {
		files = imagebuild.FirstOf(imagebuild.LocalRepos(o.repos...), files)
	}
	p, err := imagebuild.New(imagebuild.WithFiles(files), imagebuild.WithArch(o.arch), imagebuild.WithTags(o.envTag, o.instanceTag))
	if err != nil {
		return err
	}
	rows, official := splitRowDockerfiles(sel.Instances)
	var specs []imagebuild.Spec
	unplanned, downloads := 0, false
	for _, inst := range official {
		s, err := p.For(ctx, inst)
		if err != nil {
			unplanned++
			downloads = downloads || errors.Is(err, imagebuild.ErrDownload)
			fmt.Fprintf(stderr, "%s: %v\n", inst.InstanceID, err)
			continue
		}
		specs = append(specs, s)
	}
	if downloads {
		fmt.Fprintln(stderr, downloadAdvice)
	}
	if o.dryRun {
		dirs, err := imagebuild.WriteFiles(o.dir, specs)
		for _, d := range dirs {
			fmt.Fprintln(stdout, d)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote the files of %d images for %d instances (dry run, nothing built)\n", len(dirs), len(specs))
		return errors.Join(writeRowDockerfiles(o, rows, stdout, stderr), unplannedErr(unplanned))
	}
	if len(rows) > 0 && o.push != "" {
		return fmt.Errorf("--push: %d rows carry their own Dockerfile (%s, ...), whose images eval images build does not push; build them without --push and push them with docker push", len(rows), rows[0].InstanceID)
	}
	c, err := sandbox.New()
	if err != nil {
		return err
	}
	defer c.Close()
	rowsErr := buildRowImages(ctx, c, o, rows, stdout, stderr)
	if len(official) == 0 {
		return rowsErr
	}
	res, err := imagebuild.Build(ctx, c, imagebuild.BuildRequest{
		Specs: specs, Dir: o.dir, ForceRebuild: o.forceRebuild, MaxWorkers: o.maxWorkers, Push: o.push,
		Progress: func(e imagebuild.Event) { fmt.Fprintln(stderr, progressLine(e)) },
	})
	if err != nil {
		return err
	}
	failed := 0
	for _, s := range specs {
		r := res.Instances[s.InstanceID]
		if r.Err != nil {
			failed++
			outcome := "image_build_failed"
			if errors.Is(r.Err, imagebuild.ErrPushFailed) {
				outcome = "image_push_failed"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%v\n", s.InstanceID, outcome, r.Err)
			continue
		}
		fmt.Fprintf(stdout, "%s\t%s\n", s.InstanceID, r.Image)
	}
	errs := []error{rowsErr}
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d of %d instances have no image (see above)", failed, len(specs)))
	}
	return errors.Join(append(errs, unplannedErr(unplanned))...)
}

// progressLine is the one line printed per image.
func progressLine(e imagebuild.Event) string {
	switch e.Outcome {
	case imagebuild.Built:
		return fmt.Sprintf("%-9s %s: built in %s (log %s)", e.Kind, e.Image, e.Duration.Round(100*time.Millisecond), e.Log)
	case imagebuild.Failed:
		if e.Kind == imagebuild.KindPush {
			return fmt.Sprintf("%-9s %s: FAILED: %v", e.Kind, e.Image, e.Err)
		}
		return fmt.Sprintf("%-9s %s: FAILED after %s (log %s)", e.Kind, e.Image, e.Duration.Round(100*time.Millisecond), e.Log)
	case imagebuild.Skipped:
		return fmt.Sprintf("%-9s %s: skipped: %v", e.Kind, e.Image, e.Err)
	case imagebuild.Pushed:
		return fmt.Sprintf("%-9s %s: pushed in %s", e.Kind, e.Image, e.Duration.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("%-9s %s: exists", e.Kind, e.Image)
}

// downloadAdvice is the offline route when a file upstream downloads from
// GitHub could not be had (imagebuild.ErrDownload).
const downloadAdvice = "The requirements files and environment.yml files that upstream downloads from GitHub could not be downloaded.\n" +
	"Offline, --repos DIR reads them from local clones instead: DIR holding each repository as owner/name or owner__name, bare or not (repeatable)."

func unplannedErr(n int) error {
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d instances have no images as upstream builds them (see above)", n)
}

// imageBuild is what --namespace none asks of a run: build the images as
// upstream does (eval images build, then evaluate), unless a workspace-mode
// flag says where the tests run instead. --repos is read for dependency
// files, --env_image_tag, --force_rebuild, --cache_level and --clean as
// upstream.
func (o *runOptions) imageBuild() *swebench.ImageBuild {
	for _, name := range []string{"image", "image_map", "keep_workspaces", "share_objects"} {
		if o.set[name] {
			return nil
		}
	}
	var files imagebuild.Files = imagebuild.GitHub(nil, "")
	if len(o.Repos) > 0 {
		files = imagebuild.FirstOf(imagebuild.LocalRepos(o.Repos...), files)
	}
	return &swebench.ImageBuild{
		Files: files, EnvTag: o.EnvImageTag, ForceRebuild: o.ForceRebuild,
		CacheLevel: imagebuild.CacheLevel(o.CacheLevel), Clean: o.Clean,
	}
}
