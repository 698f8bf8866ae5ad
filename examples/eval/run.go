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

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
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
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	}
	o, err := parseRunFlags(defaultRunOptions(), args)
	if err != nil {
		return runFlagsFailure("eval", err, stdout, stderr)
	}
	for _, n := range o.notices() {
		fmt.Fprintln(stderr, n)
	}
	return evaluate(ctx, o, stderr, nil)
}

// runFlagsFailure reports a parseRunFlags error: help on request (exit 0),
// else the problem (exit 2).
func runFlagsFailure(prog string, err error, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "%s: %v\nRun 'eval --help' for the flags.\n", prog, err)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `eval evaluates SWE-bench predictions in hardened containers.

Usage:
  eval                         run the bundled demo (offline; builds the default image if missing)
  eval demo [FLAGS]            the demo, with run flags on top of its defaults;
                               --export DIR writes its dataset, predictions and repository instead
  eval [FLAGS]                 evaluate predictions, e.g.
                               eval -d lite-test.jsonl -p preds.jsonl --run_id r1 --repos ~/src
  eval parse [FLAGS] [FILE]    parse pytest output into a JSON report (eval parse -h)
  eval grade --dataset_name FILE --instance_id ID --log FILE [--grading v4|v5]
                               grade one test_output.txt and print its report.json
  eval merge REPORT... [-o OUT]
                               combine the run reports of shards of one run
  eval prune (--run_id ID | --all) [--docker_host HOST]... [--kubeconfig FILE]
                               remove containers and volumes (pods) left by runs

Run flags (one or two dashes; official names where the official harness has the flag):
`)
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
Modes: workspace mode (the default) checks each repository out on the host and
mounts it at /testbed in --image or the --image_map image; prebuilt mode uses the
official instance images. Prebuilt is chosen by --namespace (not none) or
--instance_image_tag, or when every selected dataset row names its image.

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

// evaluate performs a run and reports on w: the flags become a
// swebench.Config, the library prepares and runs it, and this prints the
// plan, the progress and the summary, with advice where something failed.
func evaluate(ctx context.Context, o runOptions, w io.Writer, hooks *runHooks) int {
	if hooks == nil {
		hooks = &runHooks{}
	}
	fail := func(err error) int {
		fmt.Fprintf(w, "eval: %v\n", err)
		if a := advice(err); a != "" {
			fmt.Fprintln(w, a)
		}
		return exitFailure
	}
	var logger *slog.Logger
	if o.Verbose {
		logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	rows, err := loadRows(ctx, o.DatasetName, o.Split, w)
	if err != nil {
		return fail(err)
	}
	ids := o.InstanceIDs
	var all []string // the selection before sharding
	if o.Shard.enabled() {
		sel, err := dataset.Select(rows, nil, o.InstanceIDs)
		if err != nil {
			return fail(err)
		}
		all = make([]string, len(sel.Instances))
		for i, in := range sel.Instances {
			all[i] = in.InstanceID
		}
		ids = o.Shard.slice(all)
		if len(ids) == 0 {
			fmt.Fprintf(w, "eval: shard %s holds none of the %d selected instances; nothing to do\n", o.Shard.String(), len(all))
			return exitOK
		}
		fmt.Fprintf(w, "--shard %s: %d of the %d selected instances\n", o.Shard.String(), len(ids), len(all))
	}
	preds, err := loadPredictions(o, rows, ids)
	if err != nil {
		return fail(err)
	}
	if o.Shard.enabled() {
		// Every shard checks the whole predictions file, so that all fail
		// alike on a bad one, then keeps its part of it.
		if _, err := dataset.Select(rows, preds, o.InstanceIDs); err != nil {
			return fail(err)
		}
		preds = shardPredictions(preds, all, ids, o.Shard.I == 1)
	}

	prog := newProgress(w, isTerminal(w))
	cfg := runConfig(o)
	cfg.Dataset, cfg.Predictions, cfg.InstanceIDs, cfg.Logger, cfg.Progress = rows, preds, ids, logger, prog.event
	if !o.RewriteReports {
		clients, err := newClients(engines{Hosts: o.DockerHosts, Kubeconfig: o.Kubeconfig, KubeNamespace: o.KubeNamespace, KubeNodeGrace: time.Duration(o.KubeNodeGrace) * time.Second}, logger)
		if err != nil {
			return fail(err)
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		cfg.Sandboxes = clients
		if hooks.beforeRun != nil {
			if err := hooks.beforeRun(ctx, clients); err != nil {
				return fail(err)
			}
		}
	}
	plan, err := swebench.Prepare(ctx, cfg)
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
	writeSummary(w, res, prog.skippedIDs(), filepath.Join(o.LogDir, "run_evaluation", o.RunID))
	if ctx.Err() != nil {
		fmt.Fprintln(w, "(interrupted: the errors include instances stopped or never started; a rerun with the same --run_id evaluates them)")
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(w, "eval: interrupted; finished reports are kept, rerun with --run_id %s to resume\n", o.RunID)
		return exitInterrupted
	case errors.Is(runErr, swebench.ErrEngineLost):
		fmt.Fprintf(w, "eval: the engine stopped answering during the run, so some errors above are not verdicts: %v\n", runErr)
		fmt.Fprintf(w, "%s\nThen rerun with --run_id %s: it evaluates exactly the instances without a report.\n", engineAdvice, o.RunID)
		return exitFailure
	case runErr != nil:
		return fail(runErr)
	}
	if hooks.afterRun != nil {
		return hooks.afterRun(res)
	}
	return exitOK
}

// runConfig maps the run flags onto a swebench.Config. Settings the
// command line did not give stay zero, so that the library applies its
// defaults and infers the mode from what was asked for.
func runConfig(o runOptions) swebench.Config {
	cfg := swebench.Config{
		RunID:          o.RunID,
		DatasetName:    o.DatasetName,
		Split:          o.Split,
		Rules:          harness.Rules(o.Grading),
		MaxWorkers:     o.MaxWorkers,
		Timeout:        time.Duration(o.Timeout) * time.Second,
		LogDir:         o.LogDir,
		ReportDir:      o.ReportDir,
		RewriteReports: o.RewriteReports,
		RetryFailures:  o.RetryFailures,
		Repeat:         o.Repeat,
		ImageMapFile:   o.ImageMap,
		SpecOverrides:  o.SpecOverrides,
		RepoSources:    o.Repos,
		KeepWorkspaces: o.KeepWorkspaces,
		ShareObjects:   o.ShareObjects,
		Runtime:        o.Runtime,
	}
	cfg.LostRetries = o.LostRetries
	cfg.InstanceTimeout = time.Duration(o.InstanceTimeout) * time.Second
	if o.LostRetries == 0 {
		cfg.LostRetries = -1 // Config's zero is the default; none is negative
	}
	if o.set["image"] {
		cfg.Image = o.Image
	}
	if o.set["namespace"] {
		cfg.Namespace = o.Namespace
		if noneNamespace(o.Namespace) {
			cfg.Namespace = swebench.NoNamespace // official: locally built image names
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
	fmt.Fprintf(w, "run %s: %s mode, %s rules, %d workers, timeout %ds, dataset %s\n",
		o.RunID, p.Mode, p.Rules, o.MaxWorkers, o.Timeout, label)
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

// loadPredictions reads -p, or makes the gold predictions: from the whole
// split under v4 rules, from the selection under v5 (as the official
// releases do).
func loadPredictions(o runOptions, rows []dataset.Instance, ids []string) ([]dataset.Prediction, error) {
	if o.PredictionsPath != "gold" {
		return dataset.LoadPredictions(o.PredictionsPath)
	}
	if harness.Rules(o.Grading) == harness.V4 || len(ids) == 0 {
		return dataset.GoldPredictions(rows), nil
	}
	sel, err := dataset.Select(rows, nil, ids)
	if err != nil {
		return nil, err
	}
	return dataset.GoldPredictions(sel.Instances), nil
}

// engines says where sandboxes run: the Kubernetes cluster of Kubeconfig,
// or the Docker engines of Hosts (none: DOCKER_HOST or the default socket).
type engines struct {
	Hosts                     []string
	Kubeconfig, KubeNamespace string
	KubeNodeGrace             time.Duration // 0: the backend's default
}

// newClients makes one sandbox client for the cluster, or one per Docker
// host, or one from the environment.
func newClients(eng engines, logger *slog.Logger) ([]*sandbox.Client, error) {
	var opts []sandbox.Option
	if logger != nil {
		opts = append(opts, sandbox.WithLogger(logger))
	}
	if eng.Kubeconfig != "" {
		kopts := []kube.Option{kube.WithNamespace(eng.KubeNamespace)}
		if eng.KubeNodeGrace > 0 {
			kopts = append(kopts, kube.WithNodeGrace(eng.KubeNodeGrace))
		}
		b, err := kube.New(eng.Kubeconfig, kopts...)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
		c, err := sandbox.New(append(opts, sandbox.WithBackend(b))...)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w", err)
		}
		sandboxNoun.Store("the run's pods")
		return []*sandbox.Client{c}, nil
	}
	if len(eng.Hosts) == 0 {
		c, err := sandbox.New(opts...)
		if err != nil {
			return nil, err
		}
		return []*sandbox.Client{c}, nil
	}
	var out []*sandbox.Client
	for _, h := range eng.Hosts {
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

// advice is what a person can do about err, "" when there is nothing to add.
func advice(err error) string {
	var missing *swebench.MissingImagesError
	switch {
	case errors.As(err, &missing):
		return imageAdvice(missing.Mode, missing.Images)
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

func imageAdvice(mode harness.Mode, missing []string) string {
	list := listSome(missing)
	if mode == harness.ModePrebuilt {
		return "missing prebuilt images: " + list + ".\n" +
			"Pull them (docker pull NAME) where a registry is reachable, or build them with the official harness, then rerun;\n" +
			"or use workspace mode (--namespace none with --image/--image_map and --repos)."
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
