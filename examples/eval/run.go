package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/swebox/swebox/internal/engineflags"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// Exit statuses.
const (
	exitOK          = 0   // the run completed, whatever the verdicts
	exitFailure     = 1   // the run could not complete (engine, image, input files)
	exitUsage       = 2   // bad command line
	exitInterrupted = 130 // SIGINT/SIGTERM; finished reports are kept
)

// run dispatches the verbs. No arguments run the demo.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runDemo(ctx, nil, stdout, stderr)
	}
	switch args[0] {
	case "parse":
		return runParse(args[1:], stdin, stdout, stderr)
	case "grade":
		return runGrade(args[1:], stdout, stderr)
	case "merge":
		return runMerge(args[1:], stdout, stderr)
	case "prune":
		return runPrune(ctx, args[1:], stdout, stderr)
	case "images":
		return runImages(ctx, args[1:], stdout, stderr)
	case "slurm":
		return runSlurm(ctx, args[1:], stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	}
	o, err := parseRunFlags(defaultRunOptions(), args)
	if err == nil {
		err = o.checkBuilt()
	}
	if err != nil {
		return runFlagsFailure("eval", err, stdout, stderr)
	}
	o.words = args
	for _, n := range o.notices() {
		fmt.Fprintln(stderr, n)
	}
	return evaluate(ctx, o, stdout, stderr, nil)
}

// runFlagsFailure reports a parseRunFlags error: help on request (exit 0),
// else the problem (exit 2).
func runFlagsFailure(prog string, err error, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for the flags.\n", prog, err, commandLine())
	return exitUsage
}

func printUsage(w io.Writer) {
	example := commandLine("-d", "lite-test.jsonl", "-p", "preds.jsonl", "--run_id", "r1", "--repos", "/data/repos")
	fmt.Fprint(w, strings.Replace(`eval evaluates SWE-bench predictions in hardened containers.

Usage:
  eval                         run the bundled demo (offline; builds the default image if missing)
  eval demo [FLAGS]            the demo, with run flags on top of its defaults;
                               --export DIR writes its dataset, predictions and repository instead
  eval [FLAGS]                 evaluate predictions, e.g.
                               EXAMPLE
  eval parse [FLAGS] [FILE]    parse pytest output into a JSON report (eval parse -h)
  eval grade --dataset_name FILE --instance_id ID --log FILE [--grading v4|v5]
                               grade one test_output.txt and print its report.json
  eval merge REPORT... [-o OUT]
                               combine the run reports of shards of one run
  eval slurm --shards N [--partition P] [--time T] [--cpus_per_task C] [--mem M] -- FLAGS
                               evaluate on a Slurm cluster: a job array of N shards, one
                               merged run report (eval slurm -h)
  eval prune (--run_id ID | --all) [--docker_host HOST]... [--kubeconfig FILE]
                               remove containers and volumes (pods) left by runs
  eval images build -d DATASET [-i IDS] [--repos DIR] [--dry_run] [--push NS]
                               build the instances' base, env and instance images as the
                               official harness does with --namespace none (eval images build -h)

Run flags (one or two dashes; official names where the official harness has the flag):
`, "EXAMPLE", example, 1))
	for _, s := range runFlagSpecs {
		names := dashed(s.names)
		names = strings.ReplaceAll(names, " and ", ", ")
		if s.arg != "" {
			names += " " + s.arg
		}
		def := defaultRunOptions()
		v := s.value(&def).String()
		if v != "" && v != "false" {
			fmt.Fprintf(w, "  %s\n        %s (default %s)\n", names, s.usage, v)
		} else {
			fmt.Fprintf(w, "  %s\n        %s\n", names, s.usage)
		}
	}
	fmt.Fprint(w, `
Modes: by default each instance runs as the official harness runs it: in its
official image (prebuilt mode, pulled if missing) when the harness tables know
its repository or the row names its image, else in workspace mode (your own
projects). --workspace, --repos, --image or --image_map ask for workspace mode,
which checks each repository out on the host and mounts it at /testbed in
--image or the --image_map image; an official repository needs an --image_map
entry there. --namespace and --instance_image_tag ask for the official images.

Exit status: 0 when the run completed (whatever the verdicts), 1 when it could
not (engine, images, input files), 2 for a bad command line, 130 when interrupted.
`)
}

// runHooks let the demo adjust a run.
type runHooks struct {
	// beforeRun runs once the engines are known, before the run is
	// prepared (and its images checked).
	beforeRun func(ctx context.Context, clients []*sandbox.Client) error
	// afterRun inspects the result; its exit status replaces exitOK.
	afterRun func(res *swebench.Result) int
}

// evaluate performs a run: the flags become a swebench.Config, the library
// prepares and runs it, and this prints the summary on stdout and the plan,
// the progress and advice where something failed on w (standard error).
func evaluate(ctx context.Context, o runOptions, stdout, w io.Writer, hooks *runHooks) int {
	if hooks == nil {
		hooks = &runHooks{}
	}
	fail := func(err error) int {
		fmt.Fprintf(w, "eval: %v\n", err)
		if a := advice(err, o); a != "" {
			fmt.Fprintln(w, a)
		}
		return exitFailure
	}
	var logger *slog.Logger
	if o.Verbose {
		logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	var rows []dataset.Instance
	var tasks []taskrepo.Task
	var err error
	if o.TaskRepo != "" {
		if tasks, err = taskRepoRows(o); err != nil {
			return fail(err)
		}
		rows = taskrepo.Instances(tasks)
		fmt.Fprintf(w, "task repository %s: %d tasks\n", o.TaskRepo, len(rows))
	} else if rows, err = loadRows(ctx, o.DatasetName, o.Split, o.DatasetConfig, w); err != nil {
		return fail(err)
	}
	var preds []dataset.Prediction
	if o.PredictionsPath != "gold" {
		if preds, err = loadPredictions(o.PredictionsPath); err != nil {
			return fail(err)
		}
	}

	prog := newProgress(w, isTerminal(w))
	cfg := runConfig(o)
	cfg.Dataset, cfg.Predictions, cfg.Logger, cfg.Progress = rows, preds, logger, prog.event
	if cfg.BuildImages != nil {
		cfg.BuildImages.Progress = func(e imagebuild.Event) { fmt.Fprintln(w, progressLine(e)) }
	}
	if !o.RewriteReports {
		clients, err := newClients(o.Engine, logger)
		if err != nil {
			return fail(err)
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		cfg.Sandboxes = clients
		if o.Engine.UnenforcedLimits {
			fmt.Fprintln(w, "notice: --unenforced_limits: on an engine that cannot enforce them (rootless Podman without cgroup v2 delegation), sandboxes run without their memory, CPU and process limits")
		}
		if o.TaskRepo != "" {
			building := toBuild(o, tasks, preds)
			for _, c := range clients {
				failed, err := buildBeforeEval(ctx, w, c, o.TaskRepo, building, o.MaxWorkers)
				for id, err := range failed {
					if cfg.ImageFailures == nil {
						cfg.ImageFailures = map[string]error{}
					}
					cfg.ImageFailures[id] = err
				}
				if err != nil {
					if ctx.Err() != nil {
						fmt.Fprintln(w, "eval: interrupted before the run started")
						return exitInterrupted
					}
					return fail(err)
				}
			}
		}
		if hooks.beforeRun != nil {
			if err := hooks.beforeRun(ctx, clients); err != nil {
				return fail(err)
			}
		}
	}
	plan, err := swebench.Prepare(ctx, cfg)
	var empty *swebench.EmptyShardError
	if errors.As(err, &empty) {
		fmt.Fprintf(w, "eval: %v; nothing to do\n", err)
		return exitOK
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(w, "eval: interrupted before the run started")
			return exitInterrupted
		}
		return fail(err)
	}
	defer plan.Close()
	printPlan(w, o, plan)

	res, runErr := plan.Run(ctx)
	prog.finish()
	for _, warn := range res.Warnings {
		if warn.Kind == dataset.WarnMissingPrediction && len(o.InstanceIDs) == 0 {
			continue // summarised below, as the official harness keeps quiet about them
		}
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	writeSummary(stdout, res, prog.skippedIDs(), filepath.Join(o.LogDir, "run_evaluation", o.RunID))
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(w, "eval: interrupted; finished reports are kept (instances stopped or never started have no verdict). To resume:\n  %s\n", o.resumeCommand())
		return exitInterrupted
	case errors.Is(runErr, swebench.ErrEngineLost):
		fmt.Fprintf(w, "eval: the engine stopped answering during the run, so some outcomes above are not verdicts: %v\n", runErr)
		fmt.Fprintf(w, "%s\nThen rerun; it evaluates exactly the instances without a report:\n  %s\n", engineAdvice, o.resumeCommand())
		return exitFailure
	case runErr != nil:
		return fail(runErr)
	}
	if hooks.afterRun != nil {
		return hooks.afterRun(res)
	}
	return exitOK
}

// resumeCommand is the command line that reruns this run under its run id,
// which evaluates the instances left without a report.
func (o runOptions) resumeCommand() string {
	return commandLine(o.resumeWords()...)
}

// resumeWords are the words of resumeCommand after the program.
func (o runOptions) resumeWords() []string {
	words := append([]string{}, o.words...)
	if !o.set["run_id"] {
		words = append(words, "--run_id", o.RunID)
	}
	return words
}

// runConfig maps the run flags onto a swebench.Config. Settings the
// command line did not give stay zero, so that the library applies its
// defaults and infers the mode from what was asked for.
func runConfig(o runOptions) swebench.Config {
	cfg := swebench.Config{
		RunID:          o.RunID,
		InstanceIDs:    o.InstanceIDs,
		Gold:           o.PredictionsPath == "gold",
		Shard:          swebench.Shard(o.Shard),
		DatasetName:    o.DatasetName,
		Split:          o.Split,
		Rules:          harness.Rules(o.Grading),
		GradingMode:    o.gradingMode(),
		MaxWorkers:     o.MaxWorkers,
		Timeout:        time.Duration(o.Timeout) * time.Second,
		LogDir:         o.LogDir,
		ReportDir:      o.ReportDir,
		RewriteReports: o.RewriteReports,
		RetryFailures:  o.RetryFailures,
		Repeat:         o.Repeat,
		ImageMapFile:   o.ImageMap,
		SpecOverrides:  o.SpecOverrides,
		ProCheckout:    o.ProCheckout,
		Family:         o.Family,
		RepoSources:    o.Repos,
		TaskRepo:       o.TaskRepo,
		KeepWorkspaces: o.KeepWorkspaces,
		ShareObjects:   o.ShareObjects,
		Runtime:        o.Runtime,
	}
	cfg.Limits = o.Limits
	cfg.GrantCapabilities = o.GrantCapabilities
	if o.Workspace {
		cfg.Mode = harness.ModeWorkspace
	}
	cfg.LostRetries = o.LostRetries
	cfg.InstanceTimeout = time.Duration(o.InstanceTimeout) * time.Second
	if o.LostRetries == 0 {
		cfg.LostRetries = -1 // Config's zero is the default; none is negative
	}
	cfg.PrepullWindow = o.PrepullWindow
	cfg.StartAhead = o.StartAhead
	if !o.KubeImageAffinity {
		cfg.PrepullWindow = -1
	}
	if o.set["image"] {
		cfg.Image = o.Image
	}
	if o.set["namespace"] {
		cfg.Namespace = o.Namespace
		if swebench.IsNoNamespace(o.Namespace) {
			cfg.Namespace = swebench.NoNamespace // official: locally built image names
			// Built, then run in (prebuilt mode), unless a workspace
			// flag says where the tests run instead.
			cfg.BuildImages = o.imageBuild()
		}
	}
	if o.set["instance_image_tag"] {
		cfg.ImageTag = o.InstanceImageTag
	}
	return cfg
}

// printPlan says what the run will do.
func printPlan(w io.Writer, o runOptions, p *swebench.Plan) {
	label := o.datasetLabel
	if label == "" {
		label = o.DatasetName
	}
	if p.Shard.Enabled() {
		fmt.Fprintf(w, "--shard %s: %d of the %d selected instances\n", p.Shard, p.Selected, p.ShardOf)
	}
	fmt.Fprintf(w, "run %s: %s, %s rules, %d workers, timeout %ds, dataset %s\n",
		o.RunID, modeLabel(p), p.Rules, o.MaxWorkers, o.Timeout, label)
	if !o.RewriteReports {
		fmt.Fprintf(w, "%d of %d selected instances to evaluate, %d images\n", len(p.Instances), p.Selected, len(p.Images))
	}
	hosts := make([]string, 0, len(p.Pull))
	for h := range p.Pull {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		fmt.Fprintf(w, "%d of %d images were not on %s; pulled %s, the others are pulled when needed\n", len(p.Pull[h]), len(p.Images), hostLabel(h), p.Pull[h][0])
	}
	if n := len(p.NoImage); n > 0 {
		fmt.Fprintf(w, "warning: %d instances have no image and will end as errors (%s); pass one with --image or --image_map\n", n, listSome(p.NoImage))
	}
}

// loadPredictions reads -p; its errors name the predictions file.
func loadPredictions(path string) ([]dataset.Prediction, error) {
	preds, err := dataset.LoadPredictions(path)
	if ie := (*dataset.InputError)(nil); errors.As(err, &ie) {
		err = fmt.Errorf("predictions %w", err)
	}
	if err == nil && len(preds) == 0 {
		return nil, fmt.Errorf("predictions file %s holds no predictions: nothing will run", path)
	}
	return preds, err
}

// modeLabel says which mode the plan's instances run in.
func modeLabel(p *swebench.Plan) string {
	if p.Mode != "" {
		return string(p.Mode) + " mode"
	}
	n := map[harness.Mode]int{}
	for _, m := range p.Modes {
		n[m]++
	}
	return fmt.Sprintf("prebuilt mode (official images) for %d instances, workspace mode for %d (repositories the harness tables do not know)",
		n[harness.ModePrebuilt], n[harness.ModeWorkspace])
}

// newClients makes one sandbox client for the cluster of eng.Kubeconfig, or
// one per Docker host, or one from the environment.
func newClients(eng engineflags.Engine, logger *slog.Logger) ([]*sandbox.Client, error) {
	opts := eng.DockerOptions()
	if logger != nil {
		opts = append(opts, sandbox.WithLogger(logger))
	}
	if eng.Kube() {
		kopts, err := eng.Options()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
		c, err := sandbox.New(append(opts, kopts...)...)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
		sandboxNoun.Store("the run's pods")
		return []*sandbox.Client{c}, nil
	}
	if len(eng.DockerHosts) == 0 {
		c, err := sandbox.New(opts...)
		if err != nil {
			return nil, err
		}
		return []*sandbox.Client{c}, nil
	}
	var out []*sandbox.Client
	for _, h := range eng.DockerHosts {
		c, err := sandbox.New(append(opts, sandbox.WithHost(h))...)
		if err != nil {
			for _, c := range out {
				c.Close()
			}
			return nil, fmt.Errorf("docker host %s: %w", h, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// engineAdvice is what to do about an engine that does not answer.
const engineAdvice = "Start the Docker engine (for example `sudo systemctl start docker`, or `sudo dockerd &`), " +
	"or point DOCKER_HOST or --docker_host at a running one."

// advice is what a person can do about err in the run o, "" when there is
// nothing to add.
func advice(err error, o runOptions) string {
	var missing *swebench.MissingImagesError
	var wsImage *swebench.WorkspaceImageError
	var unclaimed *swebench.UnclaimedError
	switch {
	case errors.As(err, &unclaimed):
		var b strings.Builder
		for _, fam := range unclaimed.Families() {
			fmt.Fprintf(&b, "Rows that look like %s run as its harness runs them with --family %s.\n", fam, fam)
		}
		b.WriteString("Your own repositories run in workspace mode with --workspace (and --repos DIR, --image or --image_map for their environment).")
		return b.String()
	case errors.As(err, &wsImage):
		return "Run them as upstream does: drop --workspace, --repos, --image and --image_map to use the official prebuilt images (pulled if missing);\n" +
			"or build those images locally with --namespace none; or name an image holding each repository's dependencies with --image_map FILE ({\"" + wsImage.Repos[0] + "\": \"IMAGE\"})."
	case errors.As(err, &missing):
		return imageAdvice(missing.Mode, missing.Images, o)
	case errors.Is(err, imagebuild.ErrDownload):
		return downloadAdvice
	case errors.Is(err, sandbox.ErrEngineUnreachable):
		return engineAdvice
	}
	return ""
}

// listSome lists up to five items and counts the rest.
func listSome(items []string) string {
	if len(items) > 5 {
		return strings.Join(items[:5], ", ") + fmt.Sprintf(" and %d more", len(items)-5)
	}
	return strings.Join(items, ", ")
}

func imageAdvice(mode harness.Mode, missing []string, o runOptions) string {
	list := listSome(missing)
	if mode == harness.ModePrebuilt {
		build := []string{"images", "build", "-d", orDash(o.DatasetName)}
		if o.Split != "" && o.Split != "test" {
			build = append(build, "--split", o.Split)
		}
		if len(o.InstanceIDs) > 0 {
			build = append(build, "-i", strings.Join(o.InstanceIDs, ","))
		}
		workspace := "or use workspace mode (--workspace, with --image_map naming an image for each repository, and --repos)."
		if o.Kube() {
			// --namespace none builds on this machine's engine, which the
			// nodes do not pull from.
			return "missing prebuilt images: " + list + ".\n" +
				"Push them to a registry the cluster's nodes pull from, or build them as upstream does and push them there:\n" +
				"  " + commandLine(append(build, "--push", "REGISTRY/NAMESPACE")...) + "\n" +
				"then rerun with --namespace REGISTRY/NAMESPACE;\n" + workspace
		}
		return "missing prebuilt images: " + list + ".\n" +
			"Pull them (docker pull NAME) where a registry is reachable; or build them as upstream does (eval images build, or the official harness)\n" +
			"and run in them, which --namespace none does in one go:\n" +
			"  " + commandLine(append(append([]string{}, o.resumeWords()...), "--namespace", "none")...) + "\n" + workspace
	}
	for _, m := range missing {
		if m == swebench.DefaultImage {
			return "missing images: " + list + ".\n" +
				"Build " + swebench.DefaultImage + " offline with scripts/build-image.sh (Debian packages through mmdebstrap; `go run ./examples/eval` does it for the demo),\n" +
				"or choose images that exist with --image / --image_map."
		}
	}
	return "missing images: " + list + ".\n" +
		"Build or load them (docker build, docker load), or choose images that exist with --image / --image_map."
}

func hostName(c *sandbox.Client) string { return hostLabel(c.Host()) }

func hostLabel(h string) string {
	if h != "" {
		return h
	}
	return "the Docker engine"
}
