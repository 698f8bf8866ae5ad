package imagebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// buildSpec is the part of one entry of upstream's MAP_REPO_VERSION_TO_SPECS
// that shapes image builds. A nil slice is a key upstream's entry lacks.
type buildSpec struct {
	python      string
	packages    string
	pipPackages []string
	noUseEnv    bool
	preInstall  []string
	install     []string
	build       []string
	aptPkgs     []string
	dockerSpecs pyDict
}

// Architectures.
const (
	// ArchX86_64 is what SWE-bench v4.1.0 always builds and what every
	// image name says, whatever the host.
	ArchX86_64 = "x86_64"
	// ArchARM64 names and builds native arm64 images, as v3.x to v4.0.4
	// did on aarch64 hosts.
	ArchARM64 = "arm64"
)

// Where upstream writes the files and build logs of each tier, relative to
// the working directory (BASE_IMAGE_BUILD_DIR and so on).
const (
	BaseDir     = "logs/build_images/base"
	EnvDir      = "logs/build_images/env"
	InstanceDir = "logs/build_images/instances"
)

// Script names in the build contexts.
const (
	SetupEnvScript  = "setup_env.sh"
	SetupRepoScript = "setup_repo.sh"
	// BuildLog is the file each build streams its output to.
	BuildLog = "build_image.log"
)

// envName and repoDirectory are upstream's env_name and repo_directory.
const (
	envName       = "testbed"
	repoDirectory = harness.RepoDir
)

// Tier is one of an instance's three images.
type Tier struct {
	// Name is the image name, upstream's image key, e.g.
	// "sweb.env.py.x86_64.1a2b3c...:latest".
	Name string
	// Dockerfile is the Dockerfile's text.
	Dockerfile string
	// ScriptName and Script are the setup script that the Dockerfile
	// copies from the build context; both empty for a base image.
	ScriptName string
	Script     string
	// Dir is the tier's directory of files and build log:
	// logs/build_images/<base|env|instances>/<Name with ':' → '__'>.
	Dir string
}

// Spec is an instance's three images as SWE-bench v4.1.0 builds them
// locally (run_evaluation with --namespace none).
type Spec struct {
	InstanceID string
	Repo       string
	Version    string
	// Language is upstream's extension of the repository's language: py,
	// js, go, rs, java, php, rb or c.
	Language string
	Arch     string
	// Platform is the build platform: linux/x86_64 or linux/arm64/v8.
	Platform string
	Base     Tier
	Env      Tier
	Instance Tier
	// CapAdd is the capabilities the official harness adds to the
	// instance's container (docker_specs run_args).
	CapAdd []string
}

// Tiers returns the three tiers in build order.
func (s Spec) Tiers() []Tier { return []Tier{s.Base, s.Env, s.Instance} }

// ErrUnknownRepo: the official tables do not have the repository (upstream
// raises KeyError); its images cannot be built as upstream builds them.
var ErrUnknownRepo = errors.New("repository not in the official tables")

// ErrUnknownVersion: the repository's table lacks the row's version
// (upstream raises KeyError).
var ErrUnknownVersion = errors.New("version not in the official table")

// Known reports whether the official tables have repo at version, that is
// whether For can plan its images.
func Known(repo, version string) bool {
	_, ok := specsV410[repo][version]
	return ok
}

// Option configures a Planner.
type Option func(*Planner) error

// WithFiles sets where requirements files and environment.yml files are
// read (see Files). Default: GitHub(nil, ""), the official harness's
// downloads.
func WithFiles(f Files) Option {
	return func(p *Planner) error {
		if f == nil {
			return errors.New("nil Files")
		}
		p.files = f
		return nil
	}
}

// WithArch sets the images' architecture, ArchX86_64 or ArchARM64.
// Default ArchX86_64, as v4.1.0 builds on every host.
func WithArch(arch string) Option {
	return func(p *Planner) error {
		if arch != ArchX86_64 && arch != ArchARM64 {
			return fmt.Errorf("unknown architecture %q (want %q or %q)", arch, ArchX86_64, ArchARM64)
		}
		p.arch = arch
		return nil
	}
}

// WithTags sets the tags of env and instance images (run_evaluation's
// --env_image_tag and --instance_image_tag). Default "latest" for both;
// base images are always tagged "latest", as upstream tags them.
func WithTags(env, instance string) Option {
	return func(p *Planner) error {
		for _, t := range []string{env, instance} {
			if t == "" || strings.ContainsAny(t, " \t\n:/@") {
				return fmt.Errorf("invalid image tag %q", t)
			}
		}
		p.envTag, p.instanceTag = env, instance
		return nil
	}
}

// Planner writes instances' image specs. It keeps the dependency files it
// reads, as upstream caches its downloads, and is safe for concurrent use.
type Planner struct {
	files       Files
	arch        string
	envTag      string
	instanceTag string

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	text string
	err  error
}

// New returns a Planner.
func New(opts ...Option) (*Planner, error) {
	p := &Planner{arch: ArchX86_64, envTag: harness.DefaultTag, instanceTag: harness.DefaultTag, cache: map[string]cached{}}
	for _, o := range opts {
		if err := o(p); err != nil {
			return nil, fmt.Errorf("imagebuild: %w", err)
		}
	}
	if p.files == nil {
		p.files = GitHub(nil, "")
	}
	return p, nil
}

// once memoises f under key; errors other than a cancelled context are
// kept too, as upstream's functools.cache keeps a result.
func (p *Planner) once(key string, f func() (string, error)) (string, error) {
	p.mu.Lock()
	c, ok := p.cache[key]
	p.mu.Unlock()
	if ok {
		return c.text, c.err
	}
	text, err := f()
	if err == nil || (!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)) {
		p.mu.Lock()
		p.cache[key] = cached{text, err}
		p.mu.Unlock()
	}
	return text, err
}

// For returns the instance's three images as make_test_spec describes them
// with namespace None: names, Dockerfiles and setup scripts byte for byte.
// Reading a requirements file or an environment.yml goes through the
// Planner's Files.
func (p *Planner) For(ctx context.Context, inst dataset.Instance) (Spec, error) {
	versions, ok := specsV410[inst.Repo]
	if !ok {
		return Spec{}, fmt.Errorf("images of %s: %s: %w", inst.InstanceID, inst.Repo, ErrUnknownRepo)
	}
	bs, ok := versions[inst.Version]
	if !ok {
		return Spec{}, fmt.Errorf("images of %s: %s version %q: %w", inst.InstanceID, inst.Repo, inst.Version, ErrUnknownVersion)
	}
	ext := extV410[inst.Repo]
	s := Spec{InstanceID: inst.InstanceID, Repo: inst.Repo, Version: inst.Version, Language: ext, Arch: p.arch}
	s.Platform = "linux/x86_64"
	if p.arch == ArchARM64 {
		s.Platform = "linux/arm64/v8"
	}
	s.CapAdd = bs.capAdd()

	var envList, repoList []string
	var err error
	if ext == "py" {
		envList, err = p.envScriptPy(ctx, inst, bs)
		if err != nil {
			return Spec{}, fmt.Errorf("images of %s: %w", inst.InstanceID, err)
		}
		repoList = repoScriptPy(inst, bs)
	} else {
		envList = envScriptCommon(bs)
		repoList = repoScriptCommon(inst, bs)
	}

	specsRepr := ""
	if len(bs.dockerSpecs) > 0 {
		specsRepr = pyRepr(bs.dockerSpecs)
	}
	specsHash := ""
	if specsRepr != "" {
		specsHash = sha256Hex(specsRepr)[:10]
	}
	baseName := harness.BaseImage(ext, p.arch, specsHash, harness.DefaultTag)
	envImage := harness.EnvImage(ext, p.arch, sha256Hex(pyRepr(envList) + specsRepr)[:22], p.envTag)
	instName := harness.LocalInstanceImage(inst.InstanceID, p.arch, p.instanceTag)

	kwargs := defaultDockerSpecsV410.merged(bs.dockerSpecs)
	variant, _ := kwargs.lookup("_variant")
	js2 := variant == "js_2"
	if js2 {
		kwargs = kwargs.without("_variant")
	}
	condaArch := p.arch
	if p.arch == ArchARM64 {
		condaArch = "aarch64"
	}

	var baseDF, envDF, instDF string
	if js2 {
		baseDF, err = pyFormat(dockerfileBaseJS2, pyDict{{"platform", s.Platform}}.merged(kwargs))
	} else {
		baseDF, err = pyFormat(dockerfileBaseV410[ext], pyDict{{"platform", s.Platform}, {"conda_arch", condaArch}}.merged(kwargs))
	}
	if err != nil {
		return Spec{}, fmt.Errorf("images of %s: base Dockerfile: %w", inst.InstanceID, err)
	}
	if js2 {
		envDF = baseDF
	} else {
		tmpl, ok := dockerfileEnvV410[ext]
		if !ok {
			// Languages without an env Dockerfile build the base one again.
			tmpl = dockerfileBaseV410[ext]
		}
		envDF, err = pyFormat(tmpl, pyDict{{"platform", s.Platform}, {"arch", p.arch}, {"base_image_key", baseName}}.merged(kwargs))
		if err != nil {
			return Spec{}, fmt.Errorf("images of %s: env Dockerfile: %w", inst.InstanceID, err)
		}
	}
	instDF, err = pyFormat(dockerfileInstanceV410[ext], pyDict{{"platform", s.Platform}, {"env_image_name", envImage}})
	if err != nil {
		return Spec{}, fmt.Errorf("images of %s: instance Dockerfile: %w", inst.InstanceID, err)
	}

	s.Base = Tier{Name: baseName, Dockerfile: baseDF, Dir: tierDir(BaseDir, baseName)}
	s.Env = Tier{Name: envImage, Dockerfile: envDF, ScriptName: SetupEnvScript, Script: setupScript(envList), Dir: tierDir(EnvDir, envImage)}
	s.Instance = Tier{Name: instName, Dockerfile: instDF, ScriptName: SetupRepoScript, Script: setupScript(repoList), Dir: tierDir(InstanceDir, instName)}
	return s, nil
}

func (d pyDict) without(key string) pyDict {
	var out pyDict
	for _, it := range d {
		if it.key != key {
			out = append(out, it)
		}
	}
	return out
}

func tierDir(dir, name string) string { return path.Join(dir, strings.ReplaceAll(name, ":", "__")) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// setupScript is TestSpec.setup_env_script and install_repo_script.
func setupScript(lines []string) string {
	return strings.Join(append([]string{"#!/bin/bash", "set -euxo pipefail"}, lines...), "\n") + "\n"
}
