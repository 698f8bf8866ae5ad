package swebench

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/spec"
)

// RowImageRequest asks [BuildRowImages] to build the images of rows that
// carry their own Dockerfile (SWE-PolyBench's Dockerfile field), as the
// family's harness builds one when no prebuilt image exists: the row's
// Dockerfile, put at the root of a checkout of its repository at
// base_commit (a .dockerignore there removed), is the build context.
type RowImageRequest struct {
	// Instances are the rows; a row without its own Dockerfile is left
	// out (RowImageResult.Skipped).
	Instances []dataset.Instance
	// Repos checks the repositories out. Required.
	Repos *repo.Cache
	// WorkDir holds the checkouts while they are built over. Default
	// os.TempDir().
	WorkDir string
	// Namespace and Tag name each image as a run with the same Config
	// fields names it (a run that names no namespace uses the family's),
	// so that the run finds it on the engine; the image is also tagged
	// with the harness's own local name (family.PolyBenchLocalImage).
	Namespace, Tag string
	// LogDir receives each build's output, <LogDir>/<instance id>/build.log.
	// Default: no log files.
	LogDir string
	// NetworkMode of the RUN steps, e.g. "none". Default: the engine's.
	NetworkMode string
	// Progress receives one line per row as it ends. Optional.
	Progress func(RowImageEvent)
}

// RowImageEvent is the end of one row's build: Err is nil when it was
// built.
type RowImageEvent struct {
	InstanceID string
	Images     []string
	Duration   time.Duration
	Err        error
}

// RowImageResult is what BuildRowImages did: per instance id, the images
// built (the run's name first) or the error (a *RowImageError).
type RowImageResult struct {
	Images  map[string][]string
	Errs    map[string]error
	Skipped []string
}

// RowImageError is a row whose own Dockerfile did not build: the row, the
// Dockerfile step that failed (the builder's last "Step N/M : ..." line,
// or "" when the build did not reach a step), the build log, and the
// engine's error. It wraps imagebuild.ErrImageBuildFailed.
type RowImageError struct {
	InstanceID string
	Image      string
	Step       string
	Log        string
	Err        error
}

func (e *RowImageError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "row %s: build %s from the row's Dockerfile", e.InstanceID, e.Image)
	if e.Step != "" {
		fmt.Fprintf(&b, ", at %s", e.Step)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Log != "" {
		fmt.Fprintf(&b, " (log: %s)", e.Log)
	}
	return b.String()
}

func (e *RowImageError) Unwrap() []error { return []error{imagebuild.ErrImageBuildFailed, e.Err} }

// RowImageName is the name a run gives the prebuilt image of a row that
// carries its own Dockerfile, under namespace and tag (Config.Namespace
// and ImageTag; "" namespace is the family's), and whether the row
// carries one.
func RowImageName(inst dataset.Instance, namespace, tag string) (string, bool) {
	if _, ok := family.PolyBenchDockerfile(inst); !ok {
		return "", false
	}
	f, ok := family.Lookup("swe-polybench")
	if !ok {
		return "", false
	}
	if namespace == "" {
		namespace = f.Namespace
	}
	ts, err := f.TestSpec(inst, spec.WithMode(harness.ModePrebuilt), spec.WithNamespace(namespace), spec.WithTag(tag))
	if err != nil || ts.Image == "" {
		return f.ImageName(inst, namespace, tag), true
	}
	return ts.Image, true
}

// BuildRowImages builds, on c's engine, the images of the rows that carry
// their own Dockerfile, one at a time. Each row's failure is its own
// (RowImageResult.Errs); the error is for a request that cannot run.
func BuildRowImages(ctx context.Context, c *sandbox.Client, req RowImageRequest) (RowImageResult, error) {
	res := RowImageResult{Images: map[string][]string{}, Errs: map[string]error{}}
	if req.Repos == nil {
		return res, errors.New("build row images: Repos is required")
	}
	work := req.WorkDir
	if work == "" {
		work = os.TempDir()
	}
	for _, inst := range req.Instances {
		df, ok := family.PolyBenchDockerfile(inst)
		if !ok {
			res.Skipped = append(res.Skipped, inst.InstanceID)
			continue
		}
		name, _ := RowImageName(inst, req.Namespace, req.Tag)
		tags := []string{name}
		if local := family.PolyBenchLocalImage(inst); local != name {
			tags = append(tags, local)
		}
		start := time.Now()
		err := buildRowImage(ctx, c, req, work, inst, df, tags)
		if err != nil {
			res.Errs[inst.InstanceID] = err
		} else {
			res.Images[inst.InstanceID] = tags
		}
		if req.Progress != nil {
			req.Progress(RowImageEvent{InstanceID: inst.InstanceID, Images: tags, Duration: time.Since(start), Err: err})
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}

func buildRowImage(ctx context.Context, c *sandbox.Client, req RowImageRequest, work string, inst dataset.Instance, dockerfile string, tags []string) error {
	rowErr := func(step, log string, err error) error {
		return &RowImageError{InstanceID: inst.InstanceID, Image: tags[0], Step: step, Log: log, Err: err}
	}
	safe, err := dataset.SafePathComponent(dataset.KindInstanceID, inst.InstanceID)
	if err != nil {
		return rowErr("", "", err)
	}
	dir, err := os.MkdirTemp(work, "swebox-row-image-")
	if err != nil {
		return rowErr("", "", fmt.Errorf("checkout directory: %w", err))
	}
	defer os.RemoveAll(dir)
	checkout := filepath.Join(dir, "repo")
	if _, err := req.Repos.Checkout(ctx, repo.CheckoutRequest{Repo: inst.Repo, Commit: inst.BaseCommit, Dir: checkout, SelfContained: true}); err != nil {
		return rowErr("", "", fmt.Errorf("check out %s at %s: %w", inst.Repo, inst.BaseCommit, err))
	}
	buildCtx, err := rowContext(checkout, dockerfile)
	if err != nil {
		return rowErr("", "", err)
	}
	var logBuf bytes.Buffer
	var log io.Writer = &logBuf
	logPath := ""
	if req.LogDir != "" {
		logPath = filepath.Join(req.LogDir, safe, "build.log")
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return rowErr("", "", err)
		}
		f, err := os.Create(logPath)
		if err != nil {
			return rowErr("", "", err)
		}
		defer f.Close()
		log = io.MultiWriter(&logBuf, f)
	}
	_, err = c.BuildImage(ctx, sandbox.BuildRequest{
		Context: buildCtx, Tags: tags, NetworkMode: req.NetworkMode,
		Labels: map[string]string{LabelInstance: inst.InstanceID}, Log: log,
	})
	if err != nil {
		return rowErr(lastStep(logBuf.String()), logPath, err)
	}
	return nil
}

// lastStep is the builder's last "Step N/M : INSTRUCTION" line of log,
// the step that was running when a build failed.
func lastStep(log string) string {
	step := ""
	for _, line := range strings.Split(log, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "Step ") && strings.Contains(line, " : ") {
			step = line
		}
	}
	return step
}

// rowContext is the build context: the checkout's files (its .git
// included, as the harness's clone is), a .dockerignore and a Dockerfile
// of the repository's left out, and the row's Dockerfile at the root.
func rowContext(dir, dockerfile string) (*bytes.Buffer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("build context: %w", err)
	}
	defer root.Close()
	err = hostfs.TarTree(tw, root, func(p string) (bool, error) {
		return p != "Dockerfile" && p != ".dockerignore", nil
	})
	if err != nil {
		return nil, fmt.Errorf("build context: %w", err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		return nil, err
	}
	return &buf, tw.Close()
}
