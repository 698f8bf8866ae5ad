package swebench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/spec"
)

// Label keys the evaluator puts on its sandboxes, besides the sandbox
// package's own.
const (
	LabelRun      = "swebox.run"
	LabelInstance = "swebox.instance"
)

// Result is what a run produced.
type Result struct {
	// Model is the first prediction's model name, which names the run
	// report and the log directory.
	Model string
	// Instances holds one result per instance that was run, skipped
	// (finished by an earlier run) or regraded, in dataset order.
	Instances []InstanceResult
	// Report is the run report, also written to ReportPath.
	Report     grade.RunReport
	ReportPath string
	// Warnings from loading (duplicate predictions, missing predictions).
	Warnings []dataset.Warning
}

// Evaluate runs the predictions of cfg and writes the official logs and
// reports. One instance's failure never stops the others; the error is
// non-nil only when the run itself could not proceed (bad configuration, no
// engine) or ctx ended, in which case finished reports are kept and a rerun
// with the same RunID resumes.
func Evaluate(ctx context.Context, cfg Config) (*Result, error) {
	e, err := newEvaluator(cfg)
	if err != nil {
		return nil, err
	}
	if !e.cfg.RewriteReports {
		if err := e.connect(ctx); err != nil {
			return nil, err
		}
	}
	res := &Result{Model: e.sel.Model, Warnings: e.sel.Warnings}
	results := e.runAll(ctx)
	for _, r := range results {
		if r != nil {
			res.Instances = append(res.Instances, *r)
		}
	}
	report, path, rerr := e.writeRunReport()
	res.Report, res.ReportPath = report, path
	return res, errors.Join(ctx.Err(), rerr)
}

type evaluator struct {
	cfg      Config
	rules    logparse.Rules
	sel      dataset.Selection
	modelDir string // the model's path component
	runDir   string // <log_dir>/run_evaluation/<run_id>/<model>
	specOpts []spec.Option
	log      *slog.Logger

	images   imageCache
	progress sync.Mutex
	done     int
}

func newEvaluator(cfg Config) (*evaluator, error) {
	if cfg.RunID == "" {
		return nil, errors.New("evaluate: RunID is required")
	}
	if _, err := dataset.SafePathComponent(dataset.KindRunID, cfg.RunID); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if cfg.Rules == "" {
		cfg.Rules = RulesV5
	}
	if cfg.Rules != RulesV4 && cfg.Rules != RulesV5 {
		return nil, fmt.Errorf("evaluate: unknown rules %q (want v4 or v5)", cfg.Rules)
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeWorkspace
	}
	if cfg.Mode != ModeWorkspace && cfg.Mode != ModePrebuilt {
		return nil, fmt.Errorf("evaluate: unknown mode %q", cfg.Mode)
	}
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = DefaultMaxWorkers
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.LogDir == "" {
		cfg.LogDir = DefaultLogDir
	}
	if cfg.ReportDir == "" {
		cfg.ReportDir = "."
	}
	if cfg.Image == "" {
		cfg.Image = DefaultImage
	}
	if cfg.ImageTag == "" {
		cfg.ImageTag = DefaultImageTag
	}
	if cfg.TestOutputLimit <= 0 {
		cfg.TestOutputLimit = DefaultTestOutputLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := dataset.CheckUniqueIDs(cfg.Dataset); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	sel, err := dataset.Select(cfg.Dataset, cfg.Predictions, cfg.InstanceIDs)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	model := sel.Model
	if model == "" {
		model = "none"
	}
	modelDir, err := dataset.SafePathComponent(dataset.KindModel, model)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	e := &evaluator{
		cfg: cfg, rules: logparse.Rules(cfg.Rules), sel: sel, modelDir: modelDir,
		runDir: filepath.Join(cfg.LogDir, "run_evaluation", cfg.RunID, modelDir),
		log:    cfg.Logger,
	}
	e.specOpts = []spec.Option{spec.WithRules(string(cfg.Rules)), spec.WithTag(cfg.ImageTag)}
	if cfg.Mode == ModePrebuilt {
		ns := cfg.Namespace
		switch ns {
		case "":
			ns = DefaultNamespace
		case NoNamespace:
			ns = ""
		}
		e.specOpts = append(e.specOpts, spec.WithMode(spec.ModePrebuilt), spec.WithNamespace(ns))
	} else {
		im, err := spec.NewImageMap(cfg.ImageMap)
		if err != nil {
			return nil, fmt.Errorf("evaluate: image map: %w", err)
		}
		e.specOpts = append(e.specOpts, spec.WithMode(spec.ModeWorkspace), spec.WithImages(im), spec.WithDefaultImage(cfg.Image))
	}
	if cfg.SpecOverrides != "" {
		o, err := spec.LoadOverrides(cfg.SpecOverrides)
		if err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		if err := o.CheckParsers(func(n string) bool { _, ok := logparse.Lookup(n); return ok }); err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		e.specOpts = append(e.specOpts, spec.WithOverrides(o))
	}
	return e, nil
}

// connect makes sure every engine answers and, in workspace mode, that the
// repository cache exists, before anything is written.
func (e *evaluator) connect(ctx context.Context) error {
	if len(e.cfg.Sandboxes) == 0 {
		c, err := sandbox.New(sandbox.WithLogger(e.log))
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		e.cfg.Sandboxes = []*sandbox.Client{c}
	}
	for _, c := range e.cfg.Sandboxes {
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
	}
	if e.cfg.Mode == ModeWorkspace && e.cfg.Repos == nil && len(e.sel.Run) > 0 {
		rc, err := repo.New(repo.WithLogger(e.log))
		if err != nil {
			return fmt.Errorf("evaluate: repository cache: %w", err)
		}
		e.cfg.Repos = rc
	}
	if e.cfg.WorkDir == "" {
		e.cfg.WorkDir = filepath.Join(os.TempDir(), "swebox-work")
	}
	e.images.clients = e.cfg.Sandboxes
	return nil
}

// runAll evaluates (or regrades) every selected instance with a prediction,
// cfg.MaxWorkers at a time. The results are in dataset order.
func (e *evaluator) runAll(ctx context.Context) []*InstanceResult {
	ids := e.sel.Run
	results := make([]*InstanceResult, len(ids))
	var g errgroup.Group
	g.SetLimit(e.cfg.MaxWorkers)
	for i, id := range ids {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			inst, _ := e.sel.Instance(id)
			pred := e.sel.Predictions[id]
			var r InstanceResult
			if e.cfg.RewriteReports {
				rr, ok := e.regrade(inst, pred)
				if !ok {
					return nil
				}
				r = rr
			} else {
				r = e.instance(ctx, i, inst, pred)
			}
			results[i] = &r
			return nil
		})
	}
	_ = g.Wait()
	return results
}

func (e *evaluator) emit(ev Event) {
	e.progress.Lock()
	defer e.progress.Unlock()
	if ev.Kind != EventStarted {
		e.done++
	}
	ev.Done, ev.Total = e.done, len(e.sel.Run)
	if e.cfg.Progress != nil {
		e.cfg.Progress(ev)
	}
}

func (e *evaluator) instanceDir(id string) (string, error) {
	safe, err := dataset.SafePathComponent(dataset.KindInstanceID, id)
	if err != nil {
		return "", err
	}
	return filepath.Join(e.runDir, safe), nil
}

// writeRunReport builds the run report from the report.json files on disk,
// as the official harness does, and writes it atomically.
func (e *evaluator) writeRunReport() (grade.RunReport, string, error) {
	in := grade.RunInput{
		Rules:          e.rules,
		Predictions:    map[string]grade.Prediction{},
		Reports:        map[string][]byte{},
		FailureReasons: map[string]string{},
	}
	for _, inst := range e.sel.Instances {
		id := inst.InstanceID
		in.Dataset = append(in.Dataset, id)
		dir, err := e.instanceDir(id)
		if err != nil {
			continue
		}
		resolved := false
		if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
			in.Reports[id] = b
			var r grade.InstanceReport
			resolved = r.UnmarshalJSON(b) == nil && r.Resolved
		}
		// Failure reasons are for instances that did not resolve; their
		// logs are read only then.
		if e.rules == logparse.V5 && !resolved {
			if reason := classifyInstance(dir); reason != "" {
				in.FailureReasons[id] = reason
			}
		}
	}
	for id, p := range e.sel.Predictions {
		in.Predictions[id] = grade.Prediction{EmptyPatch: p.EmptyPatch()}
	}
	report := grade.BuildRunReport(in)
	if err := os.MkdirAll(e.cfg.ReportDir, 0o755); err != nil {
		return report, "", fmt.Errorf("write run report: %w", err)
	}
	path := filepath.Join(e.cfg.ReportDir, grade.RunReportFileName(e.modelName(), e.cfg.RunID))
	if err := writeFileAtomic(path, report.Encode()); err != nil {
		return report, "", fmt.Errorf("write run report: %w", err)
	}
	return report, path, nil
}

func (e *evaluator) modelName() string {
	if e.sel.Model == "" {
		return "none"
	}
	return e.sel.Model
}

// classifyInstance runs the v5 failure classifier over an instance's logs;
// "" when there are none or nothing matches.
func classifyInstance(dir string) string {
	var b strings.Builder
	for _, f := range []string{"run_instance.log", "test_output.txt"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			b.Write(data)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return grade.ClassifyFailure(b.String())
}

// imageCache checks each image once per engine.
type imageCache struct {
	clients []*sandbox.Client
	mu      sync.Mutex
	checked map[string]error
}

func (ic *imageCache) ensure(ctx context.Context, c *sandbox.Client, image string) error {
	key := c.Host() + "\x00" + image
	ic.mu.Lock()
	if ic.checked == nil {
		ic.checked = map[string]error{}
	}
	err, ok := ic.checked[key]
	ic.mu.Unlock()
	if ok {
		return err
	}
	err = c.EnsureImage(ctx, sandbox.EnsureImageRequest{Image: image})
	if ctx.Err() == nil {
		ic.mu.Lock()
		ic.checked[key] = err
		ic.mu.Unlock()
	}
	return err
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
