package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
)

// Engine is what building needs of a container engine; *sandbox.Client
// has these methods.
type Engine interface {
	HasImage(ctx context.Context, ref string) (bool, error)
	BuildImage(ctx context.Context, req sandbox.BuildRequest) (string, error)
	RemoveImage(ctx context.Context, ref string) error
}

// Tier kinds, as the build log directories name them.
const (
	KindBase     = "base"
	KindEnv      = "env"
	KindInstance = "instances"
	// KindPush is the push of an instance image (Event.Image is the
	// name pushed).
	KindPush = "push"
)

// ErrImageBuildFailed: an image of the instance could not be built.
var ErrImageBuildFailed = errors.New("image build failed")

// BuildError is a failed build: the image, the build log to read, and the
// engine's error.
type BuildError struct {
	Image string
	Log   string
	Err   error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build %s: %v (log: %s)", e.Image, e.Err, e.Log)
}

func (e *BuildError) Unwrap() []error { return []error{ErrImageBuildFailed, e.Err} }

// Outcome of one image.
type Outcome string

const (
	Built  Outcome = "built"
	Cached Outcome = "cached" // it existed and was not rebuilt
	Failed Outcome = "failed"
	// Skipped: a tier below it failed, so it was not attempted.
	Skipped Outcome = "skipped"
	Pushed  Outcome = "pushed"
)

// Event reports one image, once, when its outcome is known.
type Event struct {
	Kind     string // KindBase, KindEnv, KindInstance or KindPush
	Image    string
	Outcome  Outcome
	Duration time.Duration
	Log      string // the build log, for Built and Failed
	Err      error  // for Failed and Skipped
}

// BuildRequest builds the images of instances, as build_instance_images
// does: base images first, then env images, then instance images.
type BuildRequest struct {
	Specs []Spec
	// Dir is the directory that holds logs/build_images. Default ".".
	Dir string
	// ForceRebuild removes and rebuilds every image of the instances
	// (--force_rebuild). Default false: existing images are kept.
	ForceRebuild bool
	// MaxWorkers bounds the env and instance builds run at once; <= 0
	// builds one at a time, as upstream's thread pool does.
	MaxWorkers int
	// NoCache builds every step afresh (the engine's layer cache unused).
	NoCache bool
	// Progress receives an Event per image, one call at a time. Optional.
	Progress func(Event)
	// Push, when set, is a registry namespace ("127.0.0.1:5000/swebench")
	// that every instance image built or found is pushed to, under the
	// published name (harness.InstanceImage: <namespace>/sweb.eval.x86_64.
	// <id with __ → _1776_>:<tag>), so that `eval --namespace` on another
	// machine, or a cluster's nodes, pull it. The Engine must also be a
	// Pusher. Default "": nothing is pushed.
	Push string
}

// Pusher is what pushing needs of a container engine; *sandbox.Client has
// it.
type Pusher interface {
	PushImage(ctx context.Context, req sandbox.PushRequest) error
}

// ErrPushFailed: an instance image was built but could not be pushed.
var ErrPushFailed = errors.New("image push failed")

// PushError is a failed push.
type PushError struct {
	Image, Ref string
	Err        error
}

func (e *PushError) Error() string { return fmt.Sprintf("push %s as %s: %v", e.Image, e.Ref, e.Err) }

func (e *PushError) Unwrap() []error { return []error{ErrPushFailed, e.Err} }

// BuildResult holds, per instance id, the instance image or the error that
// stopped it (a *BuildError, errors.Is ErrImageBuildFailed), and every
// image's event in order.
type BuildResult struct {
	Instances map[string]InstanceResult
	Events    []Event
}

// InstanceResult is one instance's image, or why there is none.
type InstanceResult struct {
	Image string
	Err   error
}

// Build builds what the specs need and does not have. A failed image is
// data in the result (the instances that need it get its *BuildError) and
// the other builds go on; an error return means the engine could not be
// asked at all or ctx ended.
func Build(ctx context.Context, eng Engine, req BuildRequest) (BuildResult, error) {
	b := &builder{eng: eng, req: req, res: BuildResult{Instances: map[string]InstanceResult{}}, failed: map[string]error{}}
	if b.req.Dir == "" {
		b.req.Dir = "."
	}
	if req.ForceRebuild {
		for _, names := range [][]string{unique(req.Specs, func(s Spec) Tier { return s.Instance }),
			unique(req.Specs, func(s Spec) Tier { return s.Env }), unique(req.Specs, func(s Spec) Tier { return s.Base })} {
			for _, n := range names {
				if err := eng.RemoveImage(ctx, n); err != nil {
					return b.res, fmt.Errorf("remove %s: %w", n, err)
				}
			}
		}
	}
	// Base images one at a time, as upstream builds them.
	for _, t := range uniqueTiers(req.Specs, func(s Spec) Tier { return s.Base }) {
		if err := b.ensure(ctx, KindBase, t, ""); err != nil {
			return b.res, err
		}
	}
	if err := b.tierInParallel(ctx, KindEnv, func(s Spec) (Tier, string) { return s.Env, s.Base.Name }); err != nil {
		return b.res, err
	}
	if err := b.tierInParallel(ctx, KindInstance, func(s Spec) (Tier, string) { return s.Instance, s.Env.Name }); err != nil {
		return b.res, err
	}
	if req.Push != "" {
		if err := b.push(ctx); err != nil {
			return b.res, err
		}
	}
	for _, s := range req.Specs {
		if err := b.failed[s.Instance.Name]; err != nil {
			b.res.Instances[s.InstanceID] = InstanceResult{Image: s.Instance.Name, Err: err}
		} else {
			b.res.Instances[s.InstanceID] = InstanceResult{Image: s.Instance.Name}
		}
	}
	return b.res, nil
}

type builder struct {
	eng    Engine
	req    BuildRequest
	mu     sync.Mutex
	res    BuildResult
	failed map[string]error // image → why it is unusable
	// progress serialises Progress: the tiers' images build in parallel.
	progress sync.Mutex
}

func (b *builder) report(e Event) {
	b.mu.Lock()
	b.res.Events = append(b.res.Events, e)
	b.mu.Unlock()
	if b.req.Progress != nil {
		b.progress.Lock()
		defer b.progress.Unlock()
		b.req.Progress(e)
	}
}

// tierInParallel ensures the distinct images of one tier with at most
// MaxWorkers at once.
func (b *builder) tierInParallel(ctx context.Context, kind string, pick func(Spec) (Tier, string)) error {
	type job struct {
		t    Tier
		from string
	}
	var jobs []job
	seen := map[string]bool{}
	for _, s := range b.req.Specs {
		t, from := pick(s)
		if !seen[t.Name] {
			seen[t.Name] = true
			jobs = append(jobs, job{t, from})
		}
	}
	sem := make(chan struct{}, max(b.req.MaxWorkers, 1))
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = b.ensure(ctx, kind, j.t, j.from)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// push pushes each usable instance image; a failed push fails its
// instance.
func (b *builder) push(ctx context.Context) error {
	p, ok := b.eng.(Pusher)
	if !ok {
		return errors.New("push: the engine cannot push images")
	}
	for _, s := range b.req.Specs {
		if b.failure(s.Instance.Name) != nil {
			continue
		}
		_, tag, _ := strings.Cut(s.Instance.Name, ":")
		ref := harness.InstanceImage(s.InstanceID, b.req.Push, tag)
		start := time.Now()
		err := p.PushImage(ctx, sandbox.PushRequest{Image: s.Instance.Name, Ref: ref})
		ev := Event{Kind: KindPush, Image: ref, Outcome: Pushed, Duration: time.Since(start)}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			pe := &PushError{Image: s.Instance.Name, Ref: ref, Err: err}
			b.fail(s.Instance.Name, pe)
			ev.Outcome, ev.Err = Failed, pe
		}
		b.report(ev)
	}
	return nil
}

func (b *builder) failure(image string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed[image]
}

func (b *builder) fail(image string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed[image] = err
}

// ensure makes one image exist: kept if present, else built from its files.
// from is the image it is built on ("" for a base image); when from failed
// the image is skipped.
func (b *builder) ensure(ctx context.Context, kind string, t Tier, from string) error {
	if from != "" {
		if err := b.failure(from); err != nil {
			b.fail(t.Name, err)
			b.report(Event{Kind: kind, Image: t.Name, Outcome: Skipped, Err: err})
			return nil
		}
	}
	if !b.req.ForceRebuild {
		ok, err := b.eng.HasImage(ctx, t.Name)
		if err != nil {
			return fmt.Errorf("inspect %s: %w", t.Name, err)
		}
		if ok {
			b.report(Event{Kind: kind, Image: t.Name, Outcome: Cached})
			return nil
		}
	}
	start := time.Now()
	logPath := filepath.Join(b.req.Dir, filepath.FromSlash(t.Dir), BuildLog)
	err := b.build(ctx, t)
	ev := Event{Kind: kind, Image: t.Name, Outcome: Built, Duration: time.Since(start), Log: logPath}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		be := &BuildError{Image: t.Name, Log: logPath, Err: err}
		b.fail(t.Name, be)
		ev.Outcome, ev.Err = Failed, be
	}
	b.report(ev)
	return nil
}

// build builds one tier, its files and log in its directory under
// b.req.Dir, with the log text of 4.1.0's build_image.
func (b *builder) build(ctx context.Context, t Tier) error {
	dir := filepath.Join(b.req.Dir, filepath.FromSlash(t.Dir))
	platform := platformOf(t.Dockerfile)
	prelude := fmt.Sprintf("Building image %s\nUsing dockerfile:\n%s\n", t.Name, t.Dockerfile)
	if t.ScriptName != "" {
		prelude += fmt.Sprintf("[SETUP SCRIPT] %s:\n%s\n", t.ScriptName, t.Script)
	}
	prelude += fmt.Sprintf("Building docker image %s in %s with platform %s\n", t.Name, dir, platform)
	return loggedBuild{
		Dir: dir, Name: t.Name, Platform: platform, NoCache: b.req.NoCache,
		Write:   func() error { return writeTier(dir, t) },
		Prelude: prelude,
		Context: func() ([]byte, string, error) {
			tarball, err := buildContext(t)
			return tarball, "", err
		},
	}.run(ctx, b.eng)
}

// loggedBuild is one image build as an upstream builder runs it, its log
// in BuildLog under Dir. The two builders swebox follows (4.1.0's tiers,
// 5.0.2's task images) differ only in the text they log before the build
// and in whether a failure to make the context is logged.
type loggedBuild struct {
	Dir      string
	Name     string // the tag built
	Platform string
	NoCache  bool
	// Write writes the build's files under Dir, before the log is created.
	Write func() error
	// Prelude is what the builder logs before the build.
	Prelude string
	// Context makes the build context and names its Dockerfile ("" for
	// the context's own "Dockerfile").
	Context func() ([]byte, string, error)
	// ContextFailed, when set, is the line logged when Context fails.
	ContextFailed func(error) string
}

// run writes the files, creates the log and writes the prelude, makes the
// context and builds it, logging the build's output without its ANSI
// escapes, then "Image built successfully!" or the error.
func (lb loggedBuild) run(ctx context.Context, eng Engine) error {
	if err := lb.Write(); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(lb.Dir, BuildLog))
	if err != nil {
		return err
	}
	defer logf.Close()
	io.WriteString(logf, lb.Prelude)
	tarball, dockerfile, err := lb.Context()
	if err != nil {
		if lb.ContextFailed != nil {
			io.WriteString(logf, lb.ContextFailed(err))
		}
		return err
	}
	_, err = eng.BuildImage(ctx, sandbox.BuildRequest{
		Context: bytes.NewReader(tarball), Dockerfile: dockerfile, Tags: []string{lb.Name},
		Platform: lb.Platform, NoCache: lb.NoCache, Log: &ansiStripper{w: logf},
	})
	if err != nil {
		fmt.Fprintf(logf, "Error: %v\n", err)
		return err
	}
	fmt.Fprintln(logf, "Image built successfully!")
	return nil
}

var fromPlatform = regexp.MustCompile(`(?m)^FROM --platform=(\S+)`)

// platformOf is the platform every upstream Dockerfile names in its FROM
// line, as the build's platform.
func platformOf(dockerfile string) string {
	if m := fromPlatform.FindStringSubmatch(dockerfile); m != nil {
		return m[1]
	}
	return ""
}

// writeTier writes the setup script, then the Dockerfile, into dir, as
// upstream's build_image does.
func writeTier(dir string, t Tier) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if t.ScriptName != "" {
		if err := os.WriteFile(filepath.Join(dir, t.ScriptName), []byte(t.Script), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(t.Dockerfile), 0o644)
}

// WriteFiles writes the Dockerfile and setup script of every tier of the
// specs under dir (logs/build_images/{base,env,instances}/<name>/), as a
// build would, without building. It returns the directories written.
func WriteFiles(dir string, specs []Spec) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, s := range specs {
		for _, t := range s.Tiers() {
			if seen[t.Dir] {
				continue
			}
			seen[t.Dir] = true
			d := filepath.Join(dir, filepath.FromSlash(t.Dir))
			if err := writeTier(d, t); err != nil {
				return out, fmt.Errorf("write %s: %w", t.Name, err)
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// buildContext is the tar stream of the Dockerfile and setup script.
func buildContext(t Tier) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name, body string) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := io.WriteString(tw, body)
		return err
	}
	if t.ScriptName != "" {
		if err := add(t.ScriptName, t.Script); err != nil {
			return nil, err
		}
	}
	if err := add("Dockerfile", t.Dockerfile); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var ansi = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]`)

// ansiStripper drops ANSI escape sequences from build output, as upstream's
// ansi_escape does before logging.
type ansiStripper struct{ w io.Writer }

func (a *ansiStripper) Write(p []byte) (int, error) {
	if _, err := a.w.Write(ansi.ReplaceAll(p, nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func unique(specs []Spec, pick func(Spec) Tier) []string {
	var out []string
	for _, t := range uniqueTiers(specs, pick) {
		out = append(out, t.Name)
	}
	return out
}

func uniqueTiers(specs []Spec, pick func(Spec) Tier) []Tier {
	var out []Tier
	seen := map[string]bool{}
	for _, s := range specs {
		t := pick(s)
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// CacheLevel is run_evaluation's --cache_level: which tiers stay on the
// engine after a run.
type CacheLevel string

const (
	CacheNone     CacheLevel = "none"
	CacheBase     CacheLevel = "base"
	CacheEnv      CacheLevel = "env"
	CacheInstance CacheLevel = "instance"
)

// Valid reports whether l is one of the four levels.
func (l CacheLevel) Valid() bool {
	return l == CacheNone || l == CacheBase || l == CacheEnv || l == CacheInstance
}

// ShouldRemove is upstream's should_remove: an image above the cache level
// goes when it is new in this run, or with clean also when it existed
// before.
func ShouldRemove(image string, level CacheLevel, clean, existedBefore bool) bool {
	if i := strings.LastIndexByte(image, '/'); i >= 0 {
		image = image[i+1:]
	}
	if !clean && existedBefore {
		return false
	}
	switch {
	case strings.HasPrefix(image, "sweb.base"):
		return level == CacheNone
	case strings.HasPrefix(image, "sweb.env"):
		return level == CacheNone || level == CacheBase
	case strings.HasPrefix(image, "sweb.eval"):
		return level == CacheNone || level == CacheBase || level == CacheEnv
	}
	return false
}
