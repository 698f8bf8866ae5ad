package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/sandbox"
)

// Requirements are Python packages to install into a virtual environment
// (python3 -m venv --system-site-packages, so the image's packages stay
// visible) at /workspace/.venv. The install runs in a container of its own;
// the program never gets the install's network access. Built environments
// are cached by a hash of the image, the packages and their source, so a
// repeated set installs once.
type Requirements struct {
	// Packages are pip requirement specifiers, e.g. "requests==2.31.0".
	// Options (entries starting with "-") are refused; use PipArgs.
	Packages []string
	// WheelDir is a host directory of wheels (or sdists) to install from
	// offline (pip --no-index --find-links), mounted read-only.
	WheelDir string
	// IndexURL is the package index to install from, e.g.
	// "https://pypi.org/simple". It needs Egress. Default: pip's.
	IndexURL string
	// Egress grants the install step, and only it, access to the index's
	// hosts, e.g. {Hosts: ["pypi.org", "files.pythonhosted.org"]}.
	Egress egress.Allowlist
	// PipArgs are added to pip install, e.g. "--pre" or "--trusted-host".
	PipArgs []string
	// Timeout bounds the install. Default: DefaultInstallTimeout.
	Timeout time.Duration
}

// Empty reports whether r installs nothing.
func (r Requirements) Empty() bool { return len(r.Packages) == 0 }

func (r Requirements) validate(runtime string) error {
	if r.Empty() {
		return nil
	}
	for _, p := range r.Packages {
		if strings.TrimSpace(p) == "" || strings.HasPrefix(strings.TrimSpace(p), "-") || strings.ContainsAny(p, "\r\n") {
			return optErr("Requirements.Packages", "%q is not a requirement specifier (options go in PipArgs)", p)
		}
	}
	if r.WheelDir == "" && !r.Egress.Enabled() {
		return optErr("Requirements", "no source: set WheelDir for an offline install, or Egress for an index")
	}
	if r.WheelDir != "" && !filepath.IsAbs(r.WheelDir) {
		return optErr("Requirements.WheelDir", "%q is not an absolute path", r.WheelDir)
	}
	if r.IndexURL != "" && !r.Egress.Enabled() {
		return optErr("Requirements.IndexURL", "an index needs Egress to reach it")
	}
	return validateEgress("Requirements.Egress", r.Egress, runtime)
}

// merge adds r's packages to base's; r's source, if it names one, replaces
// base's.
func (base Requirements) merge(r Requirements) Requirements {
	out := base
	out.Packages = slices.Clone(base.Packages)
	for _, p := range r.Packages {
		if !slices.Contains(out.Packages, p) {
			out.Packages = append(out.Packages, p)
		}
	}
	if r.WheelDir != "" || r.Egress.Enabled() {
		out.WheelDir, out.IndexURL, out.Egress, out.PipArgs = r.WheelDir, r.IndexURL, r.Egress, r.PipArgs
	}
	if r.Timeout != 0 {
		out.Timeout = r.Timeout
	}
	return out
}

// Install describes a requirements install.
type Install struct {
	// Key is the cache key of the environment.
	Key string
	// Cached reports that the environment was built before and reused.
	Cached   bool
	Duration time.Duration
	ExitCode int
	TimedOut bool
	// Stdout and Stderr are pip's, empty when Cached.
	Stdout sandbox.Output
	Stderr sandbox.Output
	// Packages lists what the environment holds (pip freeze --local).
	Packages []string
}

// OK reports whether the environment is ready.
func (i *Install) OK() bool { return i != nil && i.ExitCode == 0 && !i.TimedOut }

// envMeta is written beside a built environment.
type envMeta struct {
	Key          string    `json:"key"`
	Image        string    `json:"image"`
	Requirements []string  `json:"requirements"`
	Packages     []string  `json:"packages"`
	Built        time.Time `json:"built"`
}

const envMetaFile = ".swebox-env.json"

// envKey hashes what decides an environment's content.
func (m *Manager) envKey(ctx context.Context, image string, r Requirements) (string, error) {
	info, err := m.c.InspectImage(ctx, image)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", image, err)
	}
	pkgs := slices.Clone(r.Packages)
	for i := range pkgs {
		pkgs[i] = strings.TrimSpace(pkgs[i])
	}
	sort.Strings(pkgs)
	pkgs = slices.Compact(pkgs)
	wheels, err := dirDigest(r.WheelDir)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(struct {
		V        int
		Image    string
		Packages []string
		Wheels   string
		Index    string
		PipArgs  []string
	}{2, info.ID, pkgs, wheels, r.IndexURL, r.PipArgs})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// dirDigest hashes the names, sizes and times of a wheel directory's files
// (pip reads it flat), so new or rebuilt wheels make a new environment.
func dirDigest(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("read wheel directory: %w", err)
	}
	h := sha256.New()
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ensureEnv returns the directory of a built environment for r, building it
// once per key (concurrent callers share the build). A failed install is
// described in the Install, with an empty directory; it is not cached.
func (m *Manager) ensureEnv(ctx context.Context, image string, r Requirements) (string, *Install, error) {
	start := time.Now()
	key, err := m.envKey(ctx, image, r)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(m.envDir, key)
	if meta, err := readEnvMeta(dir); err == nil {
		return dir, &Install{Key: key, Cached: true, Duration: time.Since(start), Packages: meta.Packages}, nil
	}
	// The build runs on its own context: other callers may be waiting for
	// it after this one gives up.
	ch := m.builds.DoChan(key, func() (any, error) {
		if meta, err := readEnvMeta(dir); err == nil {
			return &Install{Key: key, Cached: true, Packages: meta.Packages}, nil
		}
		return m.buildEnv(context.WithoutCancel(ctx), image, key, r)
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return "", nil, fmt.Errorf("install requirements: %w", ctx.Err())
	}
	if res.Err != nil {
		return "", nil, res.Err
	}
	inst := *res.Val.(*Install)
	inst.Duration = time.Since(start)
	if !inst.OK() {
		return "", &inst, nil
	}
	return dir, &inst, nil
}

// maxEnvMeta bounds the metadata file and the freeze list the host reads
// from an environment (a real freeze list is a few KiB).
const maxEnvMeta = 4 << 20

// readEnvMeta reads an environment's metadata. The install sandbox wrote
// that tree: the read goes through an os.Root and refuses a link, so a
// link an install planted (and that older versions kept in the cache) is
// never followed; such an environment is built again.
func readEnvMeta(dir string) (envMeta, error) {
	var meta envMeta
	root, err := os.OpenRoot(dir)
	if err != nil {
		return meta, err
	}
	defer root.Close()
	b, err := hostfs.ReadFile(root, envMetaFile, maxEnvMeta)
	if err != nil {
		return meta, err
	}
	return meta, json.Unmarshal(b, &meta)
}

// buildEnv installs r into a fresh directory in a container of its own and
// moves it into the cache when pip succeeds.
func (m *Manager) buildEnv(ctx context.Context, image, key string, r Requirements) (*Install, error) {
	tmp, err := os.MkdirTemp(m.envDir, key+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("create environment directory: %w", err)
	}
	defer fsutil.RemoveAll(tmp)
	if err := own(tmp); err != nil {
		return nil, fmt.Errorf("create environment directory: %w", err)
	}
	reqFile := filepath.Join(tmp, ".swebox-requirements.txt")
	if err := os.WriteFile(reqFile, []byte(strings.Join(r.Packages, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("write requirements: %w", err)
	}
	spec := sandbox.Spec{
		Image:           image,
		Workspace:       tmp,
		WorkspaceTarget: venvTarget,
		WorkingDir:      "/tmp",
		Labels:          m.labels("install", ""),
		Policy:          sandbox.AllowAll(),
		Mounts:          []sandbox.Mount{{Source: m.libDir, Target: libTarget, ReadOnly: true}},
		Env:             map[string]string{},
	}
	var pipArgs []string
	if r.WheelDir != "" {
		spec.Mounts = append(spec.Mounts, sandbox.Mount{Source: r.WheelDir, Target: "/wheels", ReadOnly: true})
		pipArgs = append(pipArgs, "--find-links", "/wheels")
		if !r.Egress.Enabled() {
			// Offline: no index, and sdists build with the image's
			// setuptools instead of fetching one.
			pipArgs = append(pipArgs, "--no-index", "--no-build-isolation")
		}
	}
	if r.IndexURL != "" {
		pipArgs = append(pipArgs, "--index-url", r.IndexURL)
	}
	pipArgs = append(pipArgs, r.PipArgs...)
	px, err := m.withProxy(&spec, r.Egress)
	if err != nil {
		return nil, err
	}
	defer px.Close()
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultInstallTimeout
	}
	cmd := append([]string{"/bin/sh", libTarget + "/run.sh", venvTarget + "/.swebox-stats.json", "--", "/bin/sh", libTarget + "/install.sh"}, pipArgs...)
	res, err := m.c.Run(ctx, spec, sandbox.ExecRequest{Cmd: cmd, Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("install requirements: %w", err)
	}
	inst := &Install{Key: key, Duration: res.Duration, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Stdout: res.Stdout, Stderr: res.Stderr}
	if !inst.OK() {
		return inst, nil
	}
	if err := finishEnv(tmp, envMeta{Key: key, Image: image, Requirements: r.Packages, Built: time.Now().UTC()}, inst); err != nil {
		return nil, err
	}
	final := filepath.Join(m.envDir, key)
	if err := os.Rename(tmp, final); err != nil {
		// Another process built the same key first; its copy is as good.
		if _, merr := readEnvMeta(final); merr == nil {
			return inst, nil
		}
		// An entry whose metadata cannot be read (a link an older
		// version cached, a half-removed tree) is replaced.
		if rerr := fsutil.RemoveAll(final); rerr != nil {
			return nil, fmt.Errorf("store environment: %w", errors.Join(err, rerr))
		}
		if err := os.Rename(tmp, final); err != nil {
			return nil, fmt.Errorf("store environment: %w", err)
		}
	}
	return inst, nil
}

// finishEnv reads the freeze list into inst, writes meta and seals the
// tree the install sandbox left at dir. The sandbox is gone but its files
// are not: every access goes through an os.Root and never follows a link
// it planted (a freeze list linked to a host file is not read; a link at
// the metadata's name is replaced, not written through).
func finishEnv(dir string, meta envMeta, inst *Install) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open environment: %w", err)
	}
	defer root.Close()
	// A freeze list that is not a plain file of sane size lists nothing.
	freeze, _ := hostfs.ReadFile(root, ".swebox-freeze.txt", maxEnvMeta)
	for _, l := range strings.Split(string(freeze), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			inst.Packages = append(inst.Packages, l)
		}
	}
	meta.Packages = inst.Packages
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := root.RemoveAll(".swebox-stats.json"); err != nil {
		return fmt.Errorf("write environment metadata: %w", err)
	}
	if err := hostfs.WriteFile(root, envMetaFile, b, 0o644); err != nil {
		return fmt.Errorf("write environment metadata: %w", err)
	}
	return sealEnv(root)
}

// sealEnv makes a cached environment's files read-only and, as root, gives
// them to root: sessions hard-link them, and a session must not be able to
// change the cache through its links.
func sealEnv(root *os.Root) error {
	asRoot := os.Geteuid() == 0
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if asRoot {
			if err := root.Lchown(p, 0, 0); err != nil {
				return err
			}
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return root.Chmod(p, 0o755)
		}
		return root.Chmod(p, info.Mode().Perm()&^0o222)
	})
	if err != nil {
		return fmt.Errorf("seal environment: %w", err)
	}
	return nil
}

// installInto makes ws/.venv a copy of the environment at env. Files are
// hard-linked when the cache is sealed (as root), so the copy is cheap and
// the session can replace files but not change the cache's. The copy is
// staged beside the workspace, out of the sandbox's reach, and renamed into
// place: a symlink the sandbox left at .venv is replaced, never followed.
func installInto(ws, env string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(ws), ".venv-")
	if err != nil {
		return fmt.Errorf("stage environment: %w", err)
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("stage environment: %w", err)
	}
	if err := copyTree(env, tmp, os.Geteuid() == 0); err != nil {
		return errors.Join(fmt.Errorf("copy environment: %w", err), fsutil.RemoveAll(tmp))
	}
	dst := filepath.Join(ws, ".venv")
	if err := fsutil.RemoveAll(dst); err != nil {
		return errors.Join(err, fsutil.RemoveAll(tmp))
	}
	if err := os.Rename(tmp, dst); err != nil {
		return errors.Join(fmt.Errorf("install environment: %w", err), fsutil.RemoveAll(tmp))
	}
	return nil
}
