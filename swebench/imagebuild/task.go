package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/swebench/harness"
)

// ImageBuilderDir is where SWE-bench 5.0.2's image builder writes each
// image's Dockerfile and build log (IMAGE_BUILDER_LOG_DIR):
// logs/image_builder/<image name with ':' → '__'>/.
const ImageBuilderDir = "logs/image_builder"

// ArchAMD64 is 5.0.2's ImageSpec default architecture: built for
// linux/amd64 and named x86_64, as the published images are.
const ArchAMD64 = "amd64"

// TaskImage is one task's image as SWE-bench 5.0.2's ImageSpec describes
// it: the task's own Dockerfile, built with its task directory as the
// build context.
type TaskImage struct {
	InstanceID string
	// Name is ImageSpec.name: sweb.eval.<x86_64|arm64>.<id>:<tag>, under
	// Namespace with "__" → "_1776_", all lower case.
	Name string
	// Arch is ArchAMD64 or ArchARM64; Platform is linux/amd64 or
	// linux/arm64/v8.
	Arch     string
	Platform string
	// Dockerfile is the text built; ContextDir the directory sent as the
	// build context ("" sends the Dockerfile alone).
	Dockerfile string
	ContextDir string
	// Dir is where the Dockerfile and build log are written:
	// logs/image_builder/<Name with ':' → '__'>.
	Dir string
}

// TaskImageRequest is what NewTaskImage needs: upstream's make_image_spec
// arguments.
type TaskImageRequest struct {
	InstanceID string
	Dockerfile string
	// Namespace is the registry namespace the name is tagged for; ""
	// is upstream's None (a local name).
	Namespace string
	// Tag defaults to harness.DefaultTag.
	Tag string
	// Arch defaults to ArchAMD64, which 5.0.2 builds on every host (no
	// caller of its ImageSpec sets another).
	Arch       string
	ContextDir string
}

// NewTaskImage is 5.0.2's ImageSpec: the name, platform and directories
// of a task repository's image.
func NewTaskImage(req TaskImageRequest) (TaskImage, error) {
	if req.InstanceID == "" {
		return TaskImage{}, errors.New("task image: instance_id cannot be empty")
	}
	if req.Dockerfile == "" {
		return TaskImage{}, fmt.Errorf("task image %s: dockerfile cannot be empty", req.InstanceID)
	}
	arch := req.Arch
	if arch == "" {
		arch = ArchAMD64
	}
	tag := req.Tag
	if tag == "" {
		tag = harness.DefaultTag
	}
	t := TaskImage{InstanceID: req.InstanceID, Arch: arch, Dockerfile: req.Dockerfile, ContextDir: req.ContextDir}
	nameArch := arch
	switch arch {
	case ArchAMD64:
		t.Platform, nameArch = "linux/amd64", ArchX86_64
	case ArchARM64:
		t.Platform = "linux/arm64/v8"
	default:
		return TaskImage{}, fmt.Errorf("task image %s: invalid architecture %q (want %q or %q)", req.InstanceID, arch, ArchAMD64, ArchARM64)
	}
	t.Name = harness.TaskImage(req.InstanceID, req.Namespace, tag, nameArch)
	t.Dir = path.Join(ImageBuilderDir, strings.ReplaceAll(t.Name, ":", "__"))
	return t, nil
}

// TaskArch is the architecture a task repository's images are built for:
// 5.0.2's builder builds ArchAMD64 (linux/amd64, named x86_64) whatever the
// host, an arm64 host included, where the engine emulates amd64; asked
// (want ArchARM64) it builds native arm64 images named arm64, as its
// ImageSpec(arch="arm64") does. host is runtime.GOARCH or the engine's.
func TaskArch(host, want string) (string, error) {
	switch want {
	case "", ArchAMD64, ArchX86_64:
		return ArchAMD64, nil
	case ArchARM64, "aarch64":
		return ArchARM64, nil
	}
	return "", fmt.Errorf("unknown architecture %q (want %s or %s; the host is %s)", want, ArchAMD64, ArchARM64, host)
}

// TaskBuildRequest builds task repository images, as 5.0.2's
// build_instance_images does.
type TaskBuildRequest struct {
	Images []TaskImage
	// Dir is the directory that holds logs/image_builder. Default ".".
	Dir string
	// ForceRebuild removes each image first and builds it again (as
	// `swebench images build --force-rebuild` and, always, eval's
	// _build_before_eval). Default false: an existing image is kept.
	ForceRebuild bool
	// MaxWorkers bounds the builds run at once; <= 0 builds one at a
	// time.
	MaxWorkers int
	NoCache    bool
	// Progress receives an Event (Kind KindInstance) per image, one call
	// at a time. Optional.
	Progress func(Event)
}

// BuildTasks builds the images that do not exist (all of them with
// ForceRebuild). A failed build is data in the result (a *BuildError for
// its instance); an error return means the engine could not be asked or
// ctx ended.
func BuildTasks(ctx context.Context, eng Engine, req TaskBuildRequest) (BuildResult, error) {
	res := BuildResult{Instances: map[string]InstanceResult{}}
	if req.Dir == "" {
		req.Dir = "."
	}
	if req.ForceRebuild {
		for _, t := range req.Images {
			if err := eng.RemoveImage(ctx, t.Name); err != nil {
				return res, fmt.Errorf("remove %s: %w", t.Name, err)
			}
		}
	}
	var mu sync.Mutex
	report := func(id string, e Event) {
		mu.Lock()
		res.Events = append(res.Events, e)
		ir := InstanceResult{Image: e.Image}
		if e.Outcome == Failed {
			ir.Err = e.Err
		}
		res.Instances[id] = ir
		if req.Progress != nil {
			req.Progress(e) // one call at a time
		}
		mu.Unlock()
	}
	sem := make(chan struct{}, max(req.MaxWorkers, 1))
	var wg sync.WaitGroup
	errs := make([]error, len(req.Images))
	for i, t := range req.Images {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ok, err := eng.HasImage(ctx, t.Name)
			if err != nil {
				errs[i] = fmt.Errorf("inspect %s: %w", t.Name, err)
				return
			}
			if ok {
				report(t.InstanceID, Event{Kind: KindInstance, Image: t.Name, Outcome: Cached})
				return
			}
			start := time.Now()
			logPath := filepath.Join(req.Dir, filepath.FromSlash(t.Dir), BuildLog)
			err = buildTask(ctx, eng, req, t)
			ev := Event{Kind: KindInstance, Image: t.Name, Outcome: Built, Duration: time.Since(start), Log: logPath}
			if err != nil {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					return
				}
				ev.Outcome, ev.Err = Failed, &BuildError{Image: t.Name, Log: logPath, Err: err}
			}
			report(t.InstanceID, ev)
		}()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// WriteTaskFiles writes each image's Dockerfile under
// dir/logs/image_builder/<name>/, as 5.0.2's dry run does, and returns
// the directories written.
func WriteTaskFiles(dir string, images []TaskImage) ([]string, error) {
	var out []string
	for _, t := range images {
		d := filepath.Join(dir, filepath.FromSlash(t.Dir))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return out, err
		}
		if err := os.WriteFile(filepath.Join(d, "Dockerfile"), []byte(t.Dockerfile), 0o644); err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// buildTask builds one task image, its files and log in its directory
// under req.Dir, with the log text of 5.0.2's build_image.
func buildTask(ctx context.Context, eng Engine, req TaskBuildRequest, t TaskImage) error {
	dir := filepath.Join(req.Dir, filepath.FromSlash(t.Dir))
	return loggedBuild{
		Dir: dir, Name: t.Name, Platform: t.Platform, NoCache: req.NoCache,
		Write: func() error {
			_, err := WriteTaskFiles(req.Dir, []TaskImage{t})
			return err
		},
		Prelude: fmt.Sprintf("Building image %s\nUsing dockerfile:\n%s\n\n", t.Name, t.Dockerfile) +
			fmt.Sprintf("Building docker image %s in %s with platform %s\n", t.Name, filepath.Join(dir, "Dockerfile"), t.Platform),
		Context:       func() ([]byte, string, error) { return taskContext(t) },
		ContextFailed: func(err error) string { return fmt.Sprintf("Error building image %s: %v\n", t.Name, err) },
	}.run(ctx, eng)
}

// taskDockerfile is where the Dockerfile built sits in the context sent
// when the task directory's own Dockerfile is not it (upstream passes it
// with --file from outside the context, which the Engine API's build
// cannot): under a name no task uses.
const taskDockerfile = ".swebox.Dockerfile"

// ErrDockerignore: the task directory has a .dockerignore, which the
// build context sent here does not apply.
var ErrDockerignore = errors.New(".dockerignore is not supported in a task directory")

// taskContext is the tar stream of the task directory, the files and
// links as they are (the links not followed), and the name of the
// Dockerfile in it: the task's own "Dockerfile" when it reads as the text
// built (as upstream reads it, "\r\n" as "\n"), so that the context is
// exactly the task directory; else the text added as taskDockerfile.
func taskContext(t TaskImage) ([]byte, string, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if t.ContextDir != "" {
		if _, err := os.Lstat(filepath.Join(t.ContextDir, ".dockerignore")); err == nil {
			return nil, "", fmt.Errorf("%s: %w", filepath.Join(t.ContextDir, ".dockerignore"), ErrDockerignore)
		}
		root, err := os.OpenRoot(t.ContextDir)
		if err != nil {
			return nil, "", err
		}
		defer root.Close()
		err = hostfs.TarTree(tw, root, func(p string) (bool, error) {
			if p == taskDockerfile {
				return false, fmt.Errorf("%s: the name is reserved for the Dockerfile sent", filepath.Join(t.ContextDir, p))
			}
			return true, nil
		})
		if err != nil {
			return nil, "", err
		}
		if own, err := root.ReadFile("Dockerfile"); err == nil && universalNewlines(string(own)) == t.Dockerfile {
			if err := tw.Close(); err != nil {
				return nil, "", err
			}
			return buf.Bytes(), "Dockerfile", nil
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: taskDockerfile, Mode: 0o644, Size: int64(len(t.Dockerfile)), ModTime: time.Unix(0, 0)}); err != nil {
		return nil, "", err
	}
	if _, err := io.WriteString(tw, t.Dockerfile); err != nil {
		return nil, "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), taskDockerfile, nil
}

// universalNewlines is what Python's text mode reads: "\r\n" and a lone
// "\r" become "\n".
func universalNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// TaskSource is one row an evaluation with a task repository runs: its
// instance id, the image the row names, and its task's Dockerfile and
// directory.
type TaskSource struct {
	InstanceID string
	Image      string
	Dockerfile string
	ContextDir string
}

// BeforeEvalImages is what 5.0.2's _build_before_eval builds before an
// evaluation with --task-repo: every row's task image, tagged for the
// namespace and tag of the first row's image (the part before its first
// "/", and the tag after the last ":" of its last part, default latest).
// A row whose image is not the name built (another namespace, a registry
// with a port) is not produced by the build, so the evaluation pulls its
// published image, as upstream falls back.
func BeforeEvalImages(rows []TaskSource, arch string) ([]TaskImage, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	sample := rows[0].Image
	namespace := ""
	if i := strings.IndexByte(sample, '/'); i >= 0 {
		namespace = sample[:i]
	}
	tag := harness.DefaultTag
	last := sample[strings.LastIndexByte(sample, '/')+1:]
	if strings.Contains(last, ":") {
		tag = sample[strings.LastIndexByte(sample, ':')+1:]
	}
	out := make([]TaskImage, 0, len(rows))
	for _, r := range rows {
		t, err := NewTaskImage(TaskImageRequest{InstanceID: r.InstanceID, Dockerfile: r.Dockerfile, Namespace: namespace, Tag: tag, Arch: arch, ContextDir: r.ContextDir})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
