package swebench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
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
	// Outcomes gives each submitted instance of the selection its one
	// typed outcome: those run, skipped and regraded, those with an empty
	// patch, and those a cancelled run never started. With RewriteReports,
	// instances without a test_output.txt have none. The run report holds
	// them under grade.OutcomesKey.
	Outcomes map[string]Outcome
	// FlakyPath is the flaky.json of a run with Config.Repeat > 1.
	FlakyPath string
}

// Evaluate runs the predictions of cfg and writes the official logs and
// reports: [Prepare], then [Plan.Run]. One instance's failure never stops
// the others; the error is non-nil only when the run itself could not
// proceed (bad configuration, no engine, images missing: the Result is then
// nil), an engine was lost during the run ([ErrEngineLost]) or ctx ended;
// in the last two cases the Result is set, finished reports are kept and a
// rerun with the same RunID resumes.
func Evaluate(ctx context.Context, cfg Config) (*Result, error) {
	p, err := Prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Run(ctx)
}

type evaluator struct {
	cfg      Config
	rules    harness.Rules
	sel      dataset.Selection
	modelDir string               // the model's path component
	runDir   string               // <log_dir>/run_evaluation/<run_id>/<model>
	specs    map[string]specEntry // by instance id, for sel.Run
	shardOf  int                  // the selection's size before sharding; 0 without a shard
	log      *slog.Logger
	// owned are the clients the run created, closed by Plan.Close.
	owned []*sandbox.Client

	images   imageCache
	built    []builtImage // the images of Config.BuildImages
	ahead    *starter     // the sandboxes started ahead (Config.StartAhead); nil when off
	progress sync.Mutex
	done     int
}

// specEntry is the test spec of one instance, or why there is none, and
// the mode it runs in.
type specEntry struct {
	ts   spec.TestSpec
	err  error
	mode harness.Mode
}

// anyWorkspace reports whether an instance of the run is in workspace mode.
func (e *evaluator) anyWorkspace() bool {
	for _, se := range e.specs {
		if se.mode == harness.ModeWorkspace {
			return true
		}
	}
	return false
}

func newEvaluator(cfg Config) (*evaluator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	cfg.Rules = cfg.Rules.OrDefault()
	asked := cfg.askedMode() // before the defaults fill the fields it reads
	if err := dataset.CheckUniqueIDs(cfg.Dataset); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	shardOf, err := cfg.choosePredictions()
	if err != nil {
		return nil, err
	}
	sel, err := dataset.Select(cfg.Dataset, cfg.Predictions, cfg.InstanceIDs)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if cfg.Repeat == 0 {
		cfg.Repeat = 1
	}
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = DefaultMaxWorkers
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.InstanceTimeout <= 0 {
		cfg.InstanceTimeout = 2*cfg.Timeout + 10*time.Minute
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
		cfg.ImageTag = harness.DefaultTag
	}
	cfg.PullRetries = zeroDefaultNegativeNone(cfg.PullRetries, DefaultPullRetries)
	cfg.PrepullWindow = zeroDefaultNegativeNone(cfg.PrepullWindow, cfg.MaxWorkers)
	cfg.StartAhead = zeroDefaultNegativeNone(cfg.StartAhead, DefaultStartAhead)
	cfg.LostRetries = zeroDefaultNegativeNone(cfg.LostRetries, DefaultLostRetries)
	if cfg.PullBackoff <= 0 {
		cfg.PullBackoff = DefaultPullBackoff
	}
	if cfg.TestOutputLimit <= 0 {
		cfg.TestOutputLimit = DefaultTestOutputLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
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
		cfg: cfg, rules: cfg.Rules, sel: sel, modelDir: modelDir,
		runDir: filepath.Join(cfg.LogDir, "run_evaluation", cfg.RunID, modelDir),
		log:    cfg.Logger,
	}
	e.shardOf = shardOf
	base := []spec.Option{spec.WithRules(cfg.Rules), spec.WithTag(cfg.ImageTag)}
	if cfg.SpecOverrides != "" {
		o, err := spec.LoadOverrides(cfg.SpecOverrides)
		if err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		if err := o.CheckParsers(func(n string) bool { _, ok := logparse.Lookup(n); return ok }); err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		base = append(base, spec.WithOverrides(o))
	}
	if cfg.ProCheckout != "" { // a directory: Validate
		base = append(base, spec.WithFamilyFiles(os.DirFS(cfg.ProCheckout)))
	}
	ns := cfg.Namespace
	switch ns {
	case "":
		ns = harness.DefaultNamespace
	case NoNamespace:
		ns = ""
	}
	im, err := spec.NewImageMap(cfg.ImageMap)
	if cfg.ImageMapFile != "" {
		im, err = spec.LoadImageMap(cfg.ImageMapFile)
	}
	if err != nil {
		return nil, fmt.Errorf("evaluate: image map: %w", err)
	}
	opts := map[harness.Mode][]spec.Option{
		harness.ModePrebuilt:  append(append([]spec.Option(nil), base...), spec.WithMode(harness.ModePrebuilt), spec.WithNamespace(ns)),
		harness.ModeWorkspace: append(append([]spec.Option(nil), base...), spec.WithMode(harness.ModeWorkspace), spec.WithImages(im), spec.WithDefaultImage(cfg.Image)),
	}
	refused := map[string]bool{}
	var unclaimed *UnclaimedError
	e.specs = make(map[string]specEntry, len(sel.Run))
	for _, id := range sel.Run {
		inst, _ := sel.Instance(id)
		fam, looksLike, err := cfg.familyOf(inst)
		if err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		mode := asked
		if mode == "" {
			mode = harness.ModeWorkspace
			if fam != nil && !fam.HostCheckout {
				mode = harness.ModePrebuilt
			}
		}
		if fam == nil && !cfg.environmentGiven(asked, inst) {
			if unclaimed == nil {
				unclaimed = &UnclaimedError{LooksLike: map[string]string{}}
			}
			unclaimed.Instances = append(unclaimed.Instances, id)
			if len(looksLike) > 0 {
				unclaimed.LooksLike[id] = looksLike[0].Name
			}
		}
		if _, named := im.Lookup(inst.Repo, inst.Version); mode == harness.ModeWorkspace && !named && spec.Official(inst.Repo) {
			refused[inst.Repo] = true
		}
		ts, err := e.testSpec(fam, inst, opts[mode])
		if err == nil && fam != nil && fam.HostCheckout && mode == harness.ModePrebuilt {
			err = fmt.Errorf("%w: %s", family.ErrHostCheckout, fam.Name)
		}
		if err != nil {
			err = fmt.Errorf("test spec: %w", err)
		}
		e.specs[id] = specEntry{ts: ts, err: err, mode: mode}
	}
	if err := refuseMissingFamilyFiles(e.specs, sel.Run); err != nil && !cfg.RewriteReports {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if unclaimed != nil && !cfg.RewriteReports {
		sort.Strings(unclaimed.Instances)
		return nil, fmt.Errorf("evaluate: %w", unclaimed)
	}
	if len(refused) > 0 && !cfg.RewriteReports {
		return nil, fmt.Errorf("evaluate: %w", &WorkspaceImageError{Repos: sortedKeys(refused), Image: cfg.Image})
	}
	e.cfg.Mode = asked
	if asked == "" {
		e.cfg.Mode = e.uniformMode()
	}
	return e, nil
}

// zeroDefaultNegativeNone reads a count of Config where 0 asks for the
// default def and a negative value asks for none.
func zeroDefaultNegativeNone(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// testSpec is inst's test spec as its family builds it (spec.For for a
// row no family claims), under the run's options; a family's own image
// namespace stands in for a run that names none. A family the evaluator
// cannot run yet (Family.NotRunnable) is refused.
func (e *evaluator) testSpec(fam *family.Family, inst dataset.Instance, opts []spec.Option) (spec.TestSpec, error) {
	if fam == nil {
		return spec.For(inst, opts...)
	}
	if fam.Namespace != "" && e.cfg.Namespace == "" {
		opts = append(append([]spec.Option(nil), opts...), spec.WithNamespace(fam.Namespace))
	}
	ts, err := fam.TestSpec(inst, opts...)
	if err == nil && fam.NotRunnable != "" {
		err = fmt.Errorf("%w: %s: %s", family.ErrNotRunnable, fam.Name, fam.NotRunnable)
	}
	return ts, err
}

// uniformMode is the mode of every instance of the run; "" when they
// differ, workspace when there are none.
func (e *evaluator) uniformMode() harness.Mode {
	var m harness.Mode
	for _, se := range e.specs {
		if m != "" && se.mode != m {
			return ""
		}
		m = se.mode
	}
	if m == "" {
		return harness.ModeWorkspace
	}
	return m
}

// choosePredictions makes the gold predictions (Config.Gold) and cuts the
// shard (Config.Shard): cfg's Predictions and InstanceIDs become the
// shard's. It returns the size of the selection before sharding, 0 without
// a shard.
func (cfg *Config) choosePredictions() (int, error) {
	if !cfg.Gold && !cfg.Shard.Enabled() {
		return 0, nil
	}
	all, err := dataset.Select(cfg.Dataset, nil, cfg.InstanceIDs)
	if err != nil {
		return 0, fmt.Errorf("evaluate: %w", err)
	}
	if cfg.Gold {
		// v4.1.0 makes them from the whole split, 5.0.2 from the selection.
		rows := cfg.Dataset
		if cfg.Rules == harness.V5 && len(cfg.InstanceIDs) > 0 {
			rows = all.Instances
		}
		cfg.Predictions = dataset.GoldPredictions(rows)
	}
	if !cfg.Shard.Enabled() {
		return 0, nil
	}
	// Every shard checks the whole predictions list, so that all fail alike
	// on a bad one.
	if _, err := dataset.Select(cfg.Dataset, cfg.Predictions, cfg.InstanceIDs); err != nil {
		return 0, fmt.Errorf("evaluate: %w", err)
	}
	ids := make([]string, len(all.Instances))
	for i, in := range all.Instances {
		ids[i] = in.InstanceID
	}
	mine := cfg.Shard.Slice(ids)
	if len(mine) == 0 {
		return 0, &EmptyShardError{Shard: cfg.Shard, Selected: len(ids)}
	}
	cfg.Predictions = cfg.Shard.predictions(cfg.Predictions, ids, mine)
	cfg.InstanceIDs = mine
	return len(ids), nil
}

// connect makes sure every engine answers and, in workspace mode, that the
// repository cache exists, before anything is written.
func (e *evaluator) connect(ctx context.Context) error {
	if len(e.cfg.Sandboxes) == 0 {
		c, err := newClient(sandbox.WithLogger(e.log))
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		e.owned = append(e.owned, c)
		e.cfg.Sandboxes = []*sandbox.Client{c}
	}
	for _, c := range e.cfg.Sandboxes {
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
	}
	if e.cfg.Repos == nil && e.anyWorkspace() {
		rc, err := repo.New(repo.WithLocalSources(e.cfg.RepoSources...), repo.WithLogger(e.log))
		if err != nil {
			return fmt.Errorf("evaluate: repository cache: %w", err)
		}
		e.cfg.Repos = rc
	}
	if e.cfg.WorkDir == "" {
		e.cfg.WorkDir = DefaultWorkDir()
	}
	e.images.clients = e.cfg.Sandboxes
	return nil
}

// Seams for tests: how the run makes and closes the client it owns.
var (
	newClient   = sandbox.New
	closeClient = (*sandbox.Client).Close
)

// runAll evaluates (or regrades) every selected instance with a prediction,
// cfg.MaxWorkers at a time. The results are in dataset order.
func (e *evaluator) runAll(ctx context.Context) []*InstanceResult {
	ids := e.sel.Run
	results := make([]*InstanceResult, len(ids))
	slots := make(workerSlots, e.cfg.MaxWorkers)
	var wg sync.WaitGroup
	pp := e.startPrepull(ctx, ids)
	defer pp.stop()
	e.ahead = e.startAhead(ctx, ids)
	defer e.ahead.stop()
	for i, id := range ids {
		if !slots.acquire(ctx) {
			break
		}
		pp.dispatch(i)
		e.ahead.dispatch(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer e.ahead.drop(id) // when its worker did not take it
			held := true
			defer func() {
				if held {
					slots.release()
				}
			}()
			inst, _ := e.sel.Instance(id)
			pred := e.sel.Predictions[id]
			var r InstanceResult
			if e.cfg.RewriteReports {
				rr, ok := e.regrade(inst, pred)
				if !ok {
					return
				}
				r = rr
			} else {
				pause := func() { slots.release(); held = false }
				resume := func() bool { held = slots.acquire(ctx); return held }
				if !e.awaitImage(ctx, i, id, pause, resume) {
					return // ctx ended while waiting: never started
				}
				r = e.instance(ctx, i, inst, pred)
			}
			results[i] = &r
		}()
	}
	wg.Wait()
	return results
}

// workerSlots bounds the instances evaluated at once.
type workerSlots chan struct{}

// acquire takes a slot; false when ctx ended first.
func (s workerSlots) acquire(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case s <- struct{}{}:
		if ctx.Err() != nil {
			<-s
			return false
		}
		return true
	case <-ctx.Done():
		return false
	}
}

func (s workerSlots) release() { <-s }

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
func (e *evaluator) writeRunReport(outcomes map[string]Outcome, results []InstanceResult) (grade.RunReport, string, error) {
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
		// Failure reasons are for instances that were run and did not
		// resolve (5.0.2: unresolved and error ids, so neither empty patches
		// nor instances without a prediction); their logs are read only then.
		p, predicted := e.sel.Predictions[id]
		if e.rules == harness.V5 && !resolved && predicted && !p.EmptyPatch() {
			if reason := classifyInstance(dir); reason != "" {
				in.FailureReasons[id] = reason
			}
		}
	}
	for id, p := range e.sel.Predictions {
		in.Predictions[id] = grade.Prediction{EmptyPatch: p.EmptyPatch()}
	}
	report := grade.BuildRunReport(in)
	report.Outcomes = make(map[string]string, len(outcomes))
	for id, o := range outcomes {
		report.Outcomes[id] = string(o)
	}
	for _, r := range results {
		if len(r.Retries) > 0 {
			if report.Retried == nil {
				report.Retried = map[string][]grade.Retry{}
			}
			report.Retried[r.InstanceID] = r.Retries
		}
		if r.Repeats != nil && r.Repeats.VerdictFlipped {
			if report.FlakyVerdicts == nil {
				report.FlakyVerdicts = map[string][]string{}
			}
			for _, o := range r.Repeats.Outcomes {
				report.FlakyVerdicts[r.InstanceID] = append(report.FlakyVerdicts[r.InstanceID], string(o))
			}
		}
	}
	if err := os.MkdirAll(e.cfg.ReportDir, 0o755); err != nil {
		return report, "", fmt.Errorf("write run report: %w", err)
	}
	path := filepath.Join(e.cfg.ReportDir, grade.RunReportFileName(e.modelName(), e.cfg.RunID))
	var strictFindings grade.StrictFindings
	if e.cfg.GradingMode == GradingStrict {
		strictFindings = grade.StrictFindings{}
		for _, r := range results {
			if r.Report != nil && r.Report.Notes.Strict != nil {
				strictFindings[r.InstanceID] = r.Report.Notes.Strict.Findings
			}
		}
	}
	if err := writeFileAtomic(path, report.EncodeWithStrict(strictFindings)); err != nil {
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
	for _, f := range []string{"test_output.txt", "run_instance.log"} {
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
	if errors.Is(err, sandbox.ErrNotSupported) {
		// No image store to ask (Kubernetes): the node reports a missing
		// image when the sandbox starts, as sandbox.ErrImageNotFound.
		err = nil
	}
	// A rate limit passes; awaitImage settles it when it gives up.
	if ctx.Err() == nil && !errors.Is(err, sandbox.ErrRateLimited) {
		ic.mu.Lock()
		ic.checked[key] = err
		ic.mu.Unlock()
	}
	return err
}

// settle records the final outcome of an image's pulls on c.
func (ic *imageCache) settle(c *sandbox.Client, image string, err error) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.checked == nil {
		ic.checked = map[string]error{}
	}
	ic.checked[c.Host()+"\x00"+image] = err
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
