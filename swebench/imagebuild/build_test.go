package imagebuild_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// fakeEngine records builds; images named in fail fail to build.
type fakeEngine struct {
	mu      sync.Mutex
	images  map[string]bool
	fail    map[string]bool
	builds  []string
	removed []string
	ctxs    map[string][]string // image → files in its build context
	// platforms and dockerfiles: image → the build's platform and
	// Dockerfile path.
	platforms, dockerfiles map[string]string
}

func (f *fakeEngine) HasImage(_ context.Context, ref string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.images[ref], nil
}

func (f *fakeEngine) BuildImage(_ context.Context, req sandbox.BuildRequest) (string, error) {
	tr := tar.NewReader(req.Context)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		names = append(names, h.Name)
	}
	_, _ = io.WriteString(req.Log, "Step 1/2 : \x1b[1mFROM\x1b[0m x\n")
	f.mu.Lock()
	defer f.mu.Unlock()
	tag := req.Tags[0]
	f.builds = append(f.builds, tag)
	f.ctxs[tag] = names
	if f.platforms == nil {
		f.platforms, f.dockerfiles = map[string]string{}, map[string]string{}
	}
	f.platforms[tag], f.dockerfiles[tag] = req.Platform, req.Dockerfile
	if f.fail[tag] {
		return "", errors.New("The command '/bin/sh -c /root/setup_env.sh' returned a non-zero code: 1")
	}
	f.images[tag] = true
	return "sha256:x", nil
}

func (f *fakeEngine) RemoveImage(_ context.Context, ref string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, ref)
	delete(f.images, ref)
	return nil
}

func specsFor(t *testing.T, rows ...dataset.Instance) []imagebuild.Spec {
	t.Helper()
	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos()))
	if err != nil {
		t.Fatal(err)
	}
	var out []imagebuild.Spec
	for _, r := range rows {
		s, err := p.For(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func row(repo, version, id string) dataset.Instance {
	return dataset.Instance{Repo: repo, Version: version, InstanceID: id, BaseCommit: "0123456789abcdef0123456789abcdef01234567"}
}

// A failed env image fails its instances with a BuildError naming the log;
// the other instance is built; existing images are kept.
func TestBuildFailureIsPerInstance(t *testing.T) {
	specs := specsFor(t,
		row("psf/requests", "2.4", "psf__requests-1"),
		row("psf/requests", "2.4", "psf__requests-2"),
		row("pytest-dev/pytest", "5.4", "pytest-dev__pytest-3"))
	if specs[0].Env.Name != specs[1].Env.Name || specs[0].Base.Name != specs[2].Base.Name {
		t.Fatal("test rows do not share images as assumed")
	}
	eng := &fakeEngine{images: map[string]bool{specs[0].Base.Name: true}, fail: map[string]bool{specs[0].Env.Name: true}, ctxs: map[string][]string{}}
	dir := t.TempDir()
	var events []imagebuild.Event
	var mu sync.Mutex
	res, err := imagebuild.Build(context.Background(), eng, imagebuild.BuildRequest{Specs: specs, Dir: dir, MaxWorkers: 2,
		Progress: func(e imagebuild.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"psf__requests-1", "psf__requests-2"} {
		var be *imagebuild.BuildError
		if r := res.Instances[id]; !errors.As(r.Err, &be) || !errors.Is(r.Err, imagebuild.ErrImageBuildFailed) || be.Image != specs[0].Env.Name {
			t.Fatalf("%s: %v, want the env image's BuildError", id, r.Err)
		}
		log, err := os.ReadFile(be.Log)
		if err != nil || !strings.Contains(string(log), "non-zero code") || strings.Contains(string(log), "\x1b[") {
			t.Errorf("build log %s: %q, %v", be.Log, log, err)
		}
	}
	if r := res.Instances["pytest-dev__pytest-3"]; r.Err != nil || r.Image != specs[2].Instance.Name {
		t.Errorf("pytest-3: %+v", r)
	}
	// Base existed: not rebuilt. Env of requests built once; its instances
	// skipped.
	want := map[string]int{specs[0].Env.Name: 1, specs[2].Env.Name: 1, specs[2].Instance.Name: 1}
	for _, b := range eng.builds {
		want[b]--
	}
	for name, n := range want {
		if n != 0 {
			t.Errorf("%s built %d times too few", name, n)
		}
	}
	if len(eng.builds) != 3 {
		t.Errorf("builds %v", eng.builds)
	}
	if got := eng.ctxs[specs[2].Env.Name]; strings.Join(got, ",") != "setup_env.sh,Dockerfile" {
		t.Errorf("env build context %v", got)
	}
	outcomes := map[imagebuild.Outcome]int{}
	for _, e := range events {
		outcomes[e.Outcome]++
	}
	if outcomes[imagebuild.Cached] != 1 || outcomes[imagebuild.Failed] != 1 || outcomes[imagebuild.Skipped] != 2 || outcomes[imagebuild.Built] != 2 {
		t.Errorf("events %v", outcomes)
	}
	if _, err := os.Stat(filepath.Join(dir, specs[2].Instance.Dir, "setup_repo.sh")); err != nil {
		t.Error(err)
	}

	// Again with force_rebuild: everything removed and built afresh.
	eng.fail = nil
	eng.builds = nil
	if _, err := imagebuild.Build(context.Background(), eng, imagebuild.BuildRequest{Specs: specs, Dir: dir, ForceRebuild: true}); err != nil {
		t.Fatal(err)
	}
	if len(eng.builds) != 6 || len(eng.removed) != 6 {
		t.Errorf("force_rebuild: built %v, removed %v", eng.builds, eng.removed)
	}
}

// upstream's should_remove, case by case.
func TestShouldRemove(t *testing.T) {
	type testCase struct {
		image  string
		level  imagebuild.CacheLevel
		clean  bool
		before bool
		want   bool
	}
	for _, tc := range []testCase{
		{"sweb.base.py.x86_64:latest", imagebuild.CacheNone, false, false, true},
		{"sweb.base.py.x86_64:latest", imagebuild.CacheBase, true, true, false},
		{"sweb.base.py.x86_64:latest", imagebuild.CacheNone, false, true, false},
		{"sweb.base.py.x86_64:latest", imagebuild.CacheNone, true, true, true},
		{"sweb.env.py.x86_64.abc:latest", imagebuild.CacheBase, false, false, true},
		{"sweb.env.py.x86_64.abc:latest", imagebuild.CacheEnv, true, true, false},
		{"sweb.eval.x86_64.a__b-1:latest", imagebuild.CacheEnv, false, false, true},
		{"sweb.eval.x86_64.a__b-1:latest", imagebuild.CacheEnv, false, true, false},
		{"swebench/sweb.eval.x86_64.a_1776_b-1:latest", imagebuild.CacheEnv, true, true, true},
		{"sweb.eval.x86_64.a__b-1:latest", imagebuild.CacheInstance, true, false, false},
		{"swebox/python:bookworm", imagebuild.CacheNone, true, false, false},
	} {
		if got := imagebuild.ShouldRemove(tc.image, tc.level, tc.clean, tc.before); got != tc.want {
			t.Errorf("ShouldRemove(%s, %s, clean=%v, before=%v) = %v", tc.image, tc.level, tc.clean, tc.before, got)
		}
	}
}
