package swebench

import (
	"context"
	"errors"
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// ImageBuild asks a run to build its instance images first, as the
// official harness does with --namespace none (v4.1.0): base, env and
// instance images with upstream's names, Dockerfiles and setup scripts
// (package imagebuild). It needs Mode prebuilt and Namespace NoNamespace;
// the instance images are tagged Config.ImageTag. An instance whose image
// cannot be built ends as OutcomeImageBuildFailed, naming its build log;
// the others run.
type ImageBuild struct {
	// Files is where requirements files and environment.yml files are
	// read. Default imagebuild.GitHub (upstream's downloads).
	Files imagebuild.Files
	// Arch is imagebuild.ArchX86_64 (default, as v4.1.0) or ArchARM64.
	Arch string
	// EnvTag tags the env images. Default harness.DefaultTag.
	EnvTag string
	// Dir receives logs/build_images/. Default ".".
	Dir string
	// ForceRebuild removes and rebuilds the images.
	ForceRebuild bool
	// CacheLevel says which images stay after the run (upstream's
	// --cache_level). Default imagebuild.CacheEnv.
	CacheLevel imagebuild.CacheLevel
	// Clean also removes images above CacheLevel that existed before the
	// run (upstream's --clean); swebox considers only the run's images.
	Clean bool
	// Progress receives one event per image. Optional.
	Progress func(imagebuild.Event)
}

// builtImage is an image of the run's build and whether it existed before.
type builtImage struct {
	name          string
	existedBefore bool
}

// buildImages builds the plan's images (Config.BuildImages) and leaves out
// of Plan.Images those of the instances whose image could not be built:
// those instances end as image_build_failed, not as a missing image.
func (p *Plan) buildImages(ctx context.Context) error {
	if err := p.e.buildImages(ctx); err != nil {
		return err
	}
	failed := map[string]bool{}
	for _, id := range p.e.sel.Run {
		if se := p.e.specs[id]; se.err != nil {
			failed[se.ts.Image] = true
		}
	}
	kept := p.Images[:0]
	for _, img := range p.Images {
		if !failed[img] {
			kept = append(kept, img)
		}
	}
	p.Images = kept
	return nil
}

// buildImages builds the images of the instances to run and marks those
// whose image could not be had.
func (e *evaluator) buildImages(ctx context.Context) error {
	for _, id := range e.sel.Run {
		if err := e.cfg.ImageFailures[id]; err != nil {
			if se := e.specs[id]; se.err == nil {
				e.specs[id] = specEntry{ts: se.ts, err: err, mode: se.mode}
			}
		}
	}
	b := e.cfg.BuildImages
	if b == nil {
		return nil
	}
	if e.cfg.Mode != harness.ModePrebuilt || e.cfg.Namespace != NoNamespace {
		return errors.New("evaluate: BuildImages needs prebuilt mode and Namespace NoNamespace")
	}
	opts := []imagebuild.Option{imagebuild.WithTags(orDefault(b.EnvTag, harness.DefaultTag), e.cfg.ImageTag)}
	if b.Files != nil {
		opts = append(opts, imagebuild.WithFiles(b.Files))
	}
	if b.Arch != "" {
		opts = append(opts, imagebuild.WithArch(b.Arch))
	}
	planner, err := imagebuild.New(opts...)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	var specs []imagebuild.Spec
	for _, id := range e.sel.Run {
		se := e.specs[id]
		if se.err != nil {
			continue
		}
		inst, _ := e.sel.Instance(id)
		s, err := planner.For(ctx, inst)
		if err == nil && s.Instance.Name != se.ts.Image {
			err = fmt.Errorf("the image built would be %s, the run uses %s", s.Instance.Name, se.ts.Image)
		}
		if err != nil {
			e.specs[id] = specEntry{ts: se.ts, err: fmt.Errorf("build images: %w", err)}
			continue
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil
	}
	level := b.CacheLevel
	if level == "" {
		level = imagebuild.CacheEnv
	}
	if !level.Valid() {
		return fmt.Errorf("evaluate: unknown cache level %q", level)
	}
	for _, c := range e.cfg.Sandboxes {
		res, err := imagebuild.Build(ctx, c, imagebuild.BuildRequest{
			Specs: specs, Dir: b.Dir, ForceRebuild: b.ForceRebuild, MaxWorkers: e.cfg.MaxWorkers, Progress: b.Progress,
		})
		if err != nil {
			return fmt.Errorf("evaluate: build images: %w", err)
		}
		for _, ev := range res.Events {
			if ev.Outcome == imagebuild.Built || ev.Outcome == imagebuild.Cached {
				e.built = append(e.built, builtImage{name: ev.Image, existedBefore: ev.Outcome == imagebuild.Cached})
			}
		}
		for _, s := range specs {
			if err := res.Instances[s.InstanceID].Err; err != nil {
				se := e.specs[s.InstanceID]
				e.specs[s.InstanceID] = specEntry{ts: se.ts, err: err}
			}
		}
	}
	return nil
}

// cleanImages removes the run's images above the cache level, as upstream's
// clean_images does at the end of a run. Failures are logged.
func (e *evaluator) cleanImages(ctx context.Context) {
	b := e.cfg.BuildImages
	if b == nil {
		return
	}
	level := b.CacheLevel
	if level == "" {
		level = imagebuild.CacheEnv
	}
	ctx = context.WithoutCancel(ctx)
	for _, img := range e.built {
		if !imagebuild.ShouldRemove(img.name, level, b.Clean, img.existedBefore) {
			continue
		}
		for _, c := range e.cfg.Sandboxes {
			if err := c.RemoveImage(ctx, img.name); err != nil {
				e.log.Warn("remove image", "image", img.name, "err", err)
			}
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
