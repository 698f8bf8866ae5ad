package swebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// Plan is a run prepared by [Prepare]: its mode and rules, the instances it
// evaluates and the images they need, all checked against the engines
// before anything is written. [Plan.Run] runs it; [Plan.Close] releases the
// engine client the plan made itself, if any.
type Plan struct {
	// Mode is the mode of every instance: Config's, or what its fields ask
	// for, or, when nothing does, the one each instance gets (see
	// Config.Mode); "" when the instances' modes differ (Modes has each).
	Mode harness.Mode
	// Modes is the mode of each instance of Instances.
	Modes map[string]harness.Mode
	// Rules are Config's, or the default.
	Rules harness.Rules
	// Shard is Config's; ShardOf the size of the selection it was cut
	// from (0 without a shard).
	Shard   Shard
	ShardOf int
	// Model names the run report and the log directory.
	Model string
	// Instances lists the instances to evaluate (a prediction with a
	// non-empty patch), in dataset order; Selected is every instance of
	// the selection, those without a prediction or with an empty patch
	// included.
	Instances []string
	Selected  int
	// Images are the distinct images of Instances, sorted. An instance
	// without one ends as an error wrapping ErrNoImage (NoImage lists
	// them), as does one whose test spec fails.
	Images  []string
	NoImage []string
	// Pull lists, per engine address, images that are not there yet; one
	// of them was pulled during Prepare, the rest are pulled when an
	// instance first needs them.
	Pull map[string][]string
	// Warnings from the selection (duplicate or missing predictions, ...).
	Warnings []dataset.Warning

	e   *evaluator
	ran bool
}

// Prepare resolves cfg (defaults, mode inference, the image map and the
// override file, each read once), builds every instance's test spec and,
// unless cfg.RewriteReports, makes sure each engine answers (the error
// wraps sandbox.ErrEngineUnreachable when one does not) and has the images
// the run needs: an image missing on an engine that cannot be pulled is a
// *MissingImagesError listing every missing image. Prepare writes nothing.
func Prepare(ctx context.Context, cfg Config) (*Plan, error) {
	e, err := newEvaluator(cfg)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Mode: e.cfg.Mode, Modes: map[string]harness.Mode{}, Rules: e.rules, Model: e.modelName(),
		Shard: e.cfg.Shard, ShardOf: e.shardOf,
		Instances: e.sel.Run, Selected: len(e.sel.Instances), Warnings: e.sel.Warnings, e: e,
	}
	seen := map[string]bool{}
	for _, id := range e.sel.Run {
		se := e.specs[id]
		p.Modes[id] = se.mode
		switch {
		case se.err != nil:
		case se.ts.Image == "":
			p.NoImage = append(p.NoImage, id)
		case !seen[se.ts.Image]:
			seen[se.ts.Image] = true
			p.Images = append(p.Images, se.ts.Image)
		}
	}
	sort.Strings(p.Images)
	if e.cfg.RewriteReports {
		return p, nil
	}
	if err := e.connect(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.buildImages(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.checkImages(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// checkImages makes sure every engine has the images, or can pull them: the
// first missing image of each engine is pulled now, so that an image that
// cannot be had is one error before the run rather than one per instance.
func (p *Plan) checkImages(ctx context.Context) error {
	for _, c := range p.e.cfg.Sandboxes {
		var missing []string
		for _, img := range p.Images {
			ok, err := c.HasImage(ctx, img)
			if errors.Is(err, sandbox.ErrNotSupported) {
				break // no image store to ask: the nodes are checked as the pods start
			}
			if err != nil {
				return fmt.Errorf("evaluate: %w", err)
			}
			if !ok {
				missing = append(missing, img)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if err := p.e.images.ensure(ctx, c, missing[0]); err != nil {
			if errors.Is(err, sandbox.ErrEngineUnreachable) || ctx.Err() != nil {
				return fmt.Errorf("evaluate: %w", err)
			}
			// A registry's rate limit passes: the instances pull again,
			// with backoff (Config.PullRetries).
			if !errors.Is(err, sandbox.ErrRateLimited) {
				return &MissingImagesError{Host: c.Host(), Mode: p.imageMode(missing[0]), Images: missing, Err: err}
			}
		}
		if p.Pull == nil {
			p.Pull = map[string][]string{}
		}
		p.Pull[c.Host()] = missing
	}
	return nil
}

// imageMode is the mode of the instances that run in image.
func (p *Plan) imageMode(image string) harness.Mode {
	for _, id := range p.Instances {
		if se := p.e.specs[id]; se.err == nil && se.ts.Image == image {
			return se.mode
		}
	}
	return p.Mode
}

// Run evaluates the plan's instances (or regrades them with
// Config.RewriteReports) and writes the run report. See [Evaluate] for
// what its error means. A plan runs once.
func (p *Plan) Run(ctx context.Context) (*Result, error) {
	if p.ran {
		return nil, errors.New("evaluate: the plan has already run")
	}
	p.ran = true
	e := p.e
	if e.rules == harness.V5 {
		if err := writeRunMetadata(filepath.Dir(e.runDir), e.cfg.DatasetName, e.cfg.Split, e.cfg.TaskRepo, time.Now()); err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
	}
	res := &Result{Model: e.sel.Model, Warnings: e.sel.Warnings, Outcomes: map[string]Outcome{}}
	results := e.runAll(ctx)
	// Each instance removed its workspace; the directories that held them
	// go too once empty (os.Remove leaves a kept workspace's parents).
	_ = os.Remove(filepath.Join(e.cfg.WorkDir, e.cfg.RunID, e.modelDir))
	_ = os.Remove(filepath.Join(e.cfg.WorkDir, e.cfg.RunID))
	e.cleanImages(ctx)
	for i, r := range results {
		switch {
		case r != nil:
			res.Instances = append(res.Instances, *r)
			res.Outcomes[r.InstanceID] = r.Outcome
		case ctx.Err() != nil:
			res.Outcomes[e.sel.Run[i]] = OutcomeCancelled // never started
		}
	}
	for _, id := range e.sel.EmptyPatch {
		res.Outcomes[id] = OutcomeEmptyPatch
	}
	report, path, rerr := e.writeRunReport(res.Outcomes, res.Instances)
	res.Report, res.ReportPath = report, path
	var ferr error
	if e.cfg.Repeat > 1 && !e.cfg.RewriteReports {
		res.FlakyPath, ferr = e.writeFlaky(res.Instances)
	}
	return res, errors.Join(ctx.Err(), engineLost(ctx, res.Instances), rerr, ferr)
}

// engineLost is an *EngineLostError for the instances that ended because an
// engine stopped answering, nil when none did. Instances stopped by the end
// of ctx are not counted.
func engineLost(ctx context.Context, results []InstanceResult) error {
	var lost *EngineLostError
	for _, r := range results {
		if r.Status != StatusError || !errors.Is(r.Err, sandbox.ErrEngineUnreachable) {
			continue
		}
		if ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
			continue
		}
		if lost == nil {
			lost = &EngineLostError{Err: r.Err}
		}
		lost.Instances = append(lost.Instances, r.InstanceID)
	}
	if lost == nil {
		return nil
	}
	return lost
}

// Close closes the engine client Prepare made when Config.Sandboxes was
// empty; clients the caller passed are the caller's. Safe to call twice.
func (p *Plan) Close() error {
	var errs []error
	for _, c := range p.e.owned {
		errs = append(errs, closeClient(c))
	}
	p.e.owned = nil
	return errors.Join(errs...)
}
