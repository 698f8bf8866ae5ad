package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/spec"
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
  eval prune (--run_id ID | --all) [--docker_host HOST]...
                               remove containers and volumes left by runs

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
official sweb.eval.* images. Prebuilt is chosen by --namespace (not none) or
--instance_image_tag, or when every selected dataset row names its image.

Exit status: 0 when the run completed (whatever the verdicts), 1 when it could
not (engine, images, input files), 2 for a bad command line, 130 when interrupted.
`)
}

// runHooks let the demo adjust a run.
type runHooks struct {
	// beforeRun runs once the engines are known, before images are checked.
	beforeRun func(ctx context.Context, clients []*sandbox.Client) error
	// afterRun inspects the result; its exit status replaces exitOK.
	afterRun func(res *swebench.Result) int
}

// evaluate performs a run and reports on w.
func evaluate(ctx context.Context, o runOptions, w io.Writer, hooks *runHooks) int {
	if hooks == nil {
		hooks = &runHooks{}
	}
	fail := func(err error) int {
		fmt.Fprintf(w, "eval: %v\n", err)
		return exitFailure
	}
	var logger *slog.Logger
	if o.Verbose {
		logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	rows, err := dataset.LoadDatasetSplit(o.DatasetName, o.Split)
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
	selected := rows
	if len(ids) > 0 {
		sel, err := dataset.Select(rows, nil, ids)
		if err != nil {
			return fail(err)
		}
		selected = sel.Instances
	}
	mode := chooseMode(o, selected)

	cfg := swebench.Config{
		Dataset:        rows,
		Predictions:    preds,
		InstanceIDs:    ids,
		RunID:          o.RunID,
		Rules:          swebench.Rules(o.Grading),
		Mode:           mode,
		MaxWorkers:     o.MaxWorkers,
		Timeout:        time.Duration(o.Timeout) * time.Second,
		LogDir:         o.LogDir,
		ReportDir:      o.ReportDir,
		RewriteReports: o.RewriteReports,
		Image:          o.Image,
		Namespace:      o.Namespace,
		ImageTag:       o.InstanceImageTag,
		SpecOverrides:  o.SpecOverrides,
		KeepWorkspaces: o.KeepWorkspaces,
		ShareObjects:   o.ShareObjects,
		Runtime:        o.Runtime,
		Logger:         logger,
	}
	if noneNamespace(cfg.Namespace) {
		cfg.Namespace = swebench.NoNamespace // official: locally built image names
	}
	if o.ImageMap != "" {
		if cfg.ImageMap, err = readImageMap(o.ImageMap); err != nil {
			return fail(err)
		}
	}
	if mode == swebench.ModeWorkspace && !o.RewriteReports {
		opts := []repo.Option{repo.WithLocalSources(o.Repos...)}
		if logger != nil {
			opts = append(opts, repo.WithLogger(logger))
		}
		if cfg.Repos, err = repo.New(opts...); err != nil {
			return fail(err)
		}
	}

	if !o.RewriteReports {
		clients, err := newClients(o.DockerHosts, logger)
		if err != nil {
			return fail(err)
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		cfg.Sandboxes = clients
		for _, c := range clients {
			if err := c.Ping(ctx); err != nil {
				return fail(err)
			}
		}
		if hooks.beforeRun != nil {
			if err := hooks.beforeRun(ctx, clients); err != nil {
				return fail(err)
			}
		}
		if err := checkImages(ctx, o, cfg, selected, w); err != nil {
			return fail(err)
		}
	}

	label := o.datasetLabel
	if label == "" {
		label = o.DatasetName
	}
	fmt.Fprintf(w, "run %s: %s mode, %s rules, %d workers, timeout %ds, dataset %s\n",
		o.RunID, mode, o.Grading, o.MaxWorkers, o.Timeout, label)
	prog := newProgress(w, isTerminal(w))
	cfg.Progress = prog.event
	res, runErr := swebench.Evaluate(ctx, cfg)
	prog.finish()
	if res == nil {
		if ctx.Err() != nil {
			fmt.Fprintln(w, "eval: interrupted before the run started")
			return exitInterrupted
		}
		return fail(runErr)
	}
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
	case runErr != nil:
		return fail(runErr)
	}
	if code := engineLost(ctx, cfg.Sandboxes, res, w); code != exitOK {
		return code
	}
	if hooks.afterRun != nil {
		return hooks.afterRun(res)
	}
	return exitOK
}

// loadPredictions reads -p, or makes the gold predictions: from the whole
// split under v4 rules, from the selection under v5 (as the official
// releases do).
func loadPredictions(o runOptions, rows []dataset.Instance, ids []string) ([]dataset.Prediction, error) {
	if o.PredictionsPath != "gold" {
		return dataset.LoadPredictions(o.PredictionsPath)
	}
	if swebench.Rules(o.Grading) == swebench.RulesV4 || len(ids) == 0 {
		return dataset.GoldPredictions(rows), nil
	}
	sel, err := dataset.Select(rows, nil, ids)
	if err != nil {
		return nil, err
	}
	return dataset.GoldPredictions(sel.Instances), nil
}

// readImageMap reads --image_map, with the spec package's checks and
// file:line errors.
func readImageMap(path string) (map[string]string, error) {
	if _, err := spec.LoadImageMap(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read image map: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read image map %s: %w", path, err)
	}
	return m, nil
}

// newClients makes one sandbox client per --docker_host, or one from the
// environment (DOCKER_HOST or the default socket).
func newClients(hosts []string, logger *slog.Logger) ([]*sandbox.Client, error) {
	var opts []sandbox.Option
	if logger != nil {
		opts = append(opts, sandbox.WithLogger(logger))
	}
	if len(hosts) == 0 {
		c, err := sandbox.New(opts...)
		if err != nil {
			return nil, err
		}
		return []*sandbox.Client{c}, nil
	}
	var out []*sandbox.Client
	for _, h := range hosts {
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

// checkImages makes sure, before anything runs, that the images the selected
// instances need are on every engine (pulling what can be pulled), so that a
// missing image is one clear message rather than an error per instance.
func checkImages(ctx context.Context, o runOptions, cfg swebench.Config, rows []dataset.Instance, w io.Writer) error {
	images, err := neededImages(o, cfg, rows)
	if err != nil {
		return err
	}
	for _, c := range cfg.Sandboxes {
		var missing []string
		for _, img := range images {
			ok, err := c.HasImage(ctx, img)
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, img)
			}
		}
		if len(missing) == 0 {
			continue
		}
		fmt.Fprintf(w, "%d of %d images are not on %s; pulling %s\n", len(missing), len(images), hostName(c), missing[0])
		if err := c.EnsureImage(ctx, sandbox.EnsureImageRequest{Image: missing[0]}); err != nil {
			return fmt.Errorf("%w\n%s", err, imageAdvice(cfg.Mode, missing))
		}
	}
	return nil
}

// neededImages lists the distinct images of the instances that will run.
func neededImages(o runOptions, cfg swebench.Config, rows []dataset.Instance) ([]string, error) {
	opts := []spec.Option{spec.WithRules(o.Grading), spec.WithTag(cfg.ImageTag)}
	if cfg.Mode == swebench.ModePrebuilt {
		opts = append(opts, spec.WithMode(spec.ModePrebuilt), spec.WithNamespace(cfg.Namespace))
	} else {
		im, err := spec.NewImageMap(cfg.ImageMap)
		if err != nil {
			return nil, err
		}
		opts = append(opts, spec.WithMode(spec.ModeWorkspace), spec.WithImages(im), spec.WithDefaultImage(cfg.Image))
	}
	if cfg.SpecOverrides != "" {
		ov, err := spec.LoadOverrides(cfg.SpecOverrides)
		if err != nil {
			return nil, err
		}
		opts = append(opts, spec.WithOverrides(ov))
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		s, err := spec.For(r, opts...)
		if err != nil || s.Image == "" || seen[s.Image] {
			continue // the run reports the instance's error
		}
		seen[s.Image] = true
		out = append(out, s.Image)
	}
	sort.Strings(out)
	return out, nil
}

func imageAdvice(mode swebench.Mode, missing []string) string {
	list := strings.Join(missing, ", ")
	if len(missing) > 5 {
		list = strings.Join(missing[:5], ", ") + fmt.Sprintf(" and %d more", len(missing)-5)
	}
	if mode == swebench.ModePrebuilt {
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

func hostName(c *sandbox.Client) string {
	if h := c.Host(); h != "" {
		return h
	}
	return "the Docker engine"
}

// engineLost turns a run whose engines died mid-way into an infrastructure
// failure: instances then end as errors, which are not verdicts.
func engineLost(ctx context.Context, clients []*sandbox.Client, res *swebench.Result, w io.Writer) int {
	errorsSeen := false
	for _, r := range res.Instances {
		errorsSeen = errorsSeen || r.Status == swebench.StatusError
	}
	if !errorsSeen {
		return exitOK
	}
	for _, c := range clients {
		if err := c.Ping(ctx); err != nil {
			fmt.Fprintf(w, "eval: the engine stopped answering during the run, so some errors above are not verdicts: %v\n", err)
			return exitFailure
		}
	}
	return exitOK
}
