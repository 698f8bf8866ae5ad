package sandbox

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-units"
)

// Defaults of a Spec's hardening. Each is used when the corresponding field
// is zero.
const (
	DefaultUser        = "1000:1000"
	DefaultPidsLimit   = 512
	DefaultMemory      = 2 << 30 // bytes; swap is set equal, so no swap
	DefaultNanoCPUs    = 2e9
	DefaultTmpSize     = 512 << 20
	DefaultNoFile      = 4096
	DefaultFileSize    = 1 << 30 // bytes, RLIMIT_FSIZE
	DefaultLogSize     = "10m"
	DefaultOutputLimit = 1 << 20 // bytes kept per stream of a command
	WorkspaceDir       = "/workspace"
	HomeDir            = "/tmp/home"
)

// Spec describes a sandbox. The zero value of every hardening field means the
// hardened default; loosening one needs a field of Relax, so a relaxation is
// always visible in the spec.
type Spec struct {
	// Image to run; required.
	Image string
	// Workspace is a host directory mounted read-write at WorkspaceTarget.
	// Optional.
	Workspace string
	// WorkspaceTarget is where Workspace is mounted. Default /workspace.
	WorkspaceTarget string
	// WorkingDir for commands. Default: WorkspaceTarget when Workspace is
	// set, else the image's.
	WorkingDir string
	// Env is set for every command, on top of the image's and HOME.
	Env map[string]string
	// User as "uid:gid", numeric. Default 1000:1000. Root (uid 0) needs
	// Relax.Root.
	User string
	// Limits on resources; zero fields take the defaults.
	Limits Limits
	// Runtime is the OCI runtime, e.g. "runsc" for gVisor. Default: the
	// engine's default runtime.
	Runtime string
	// Labels added to the container and its volumes, besides the
	// swebox.managed and swebox.session labels.
	Labels map[string]string
	// Policy decides which commands may run. The zero Policy admits
	// DefaultCommands.
	Policy Policy
	// Mounts beyond the workspace.
	Mounts []Mount
	// Name of the container. Default: chosen by the engine.
	Name string
	// Relax lists the hardening this sandbox gives up.
	Relax Relax
}

// Limits caps a sandbox's resources. Zero means the default.
type Limits struct {
	Memory    int64  // bytes; MemorySwap is set to the same value. Default 2 GiB.
	NanoCPUs  int64  // 1e9 per CPU. Default 2 CPUs.
	PidsLimit int64  // processes and threads. Default 512.
	TmpSize   int64  // bytes of the tmpfs at /tmp. Default 512 MiB.
	NoFile    int64  // open files (RLIMIT_NOFILE). Default 4096.
	FileSize  int64  // largest file a process may write (RLIMIT_FSIZE), bytes. Default 1 GiB.
	LogSize   string // container log cap, e.g. "10m". Default 10m.
}

// Relax loosens the default hardening. Every field's zero value keeps it.
type Relax struct {
	// Network attaches the sandbox to this Docker network (e.g. "bridge")
	// instead of none.
	Network string
	// WritableRootFS makes the root filesystem writable.
	WritableRootFS bool
	// Root allows running as uid 0 (still without capabilities).
	Root bool
	// CapAdd adds these capabilities back after dropping all.
	CapAdd []string
	// NewPrivileges lets setuid binaries raise privileges.
	NewPrivileges bool
	// NoInit runs the command as PID 1 without an init process.
	NoInit bool
}

// Mount is an extra mount.
type Mount struct {
	// Type is "bind", "volume" or "tmpfs". Default "bind".
	Type string
	// Source is the host path of a bind mount or the name of a volume; an
	// empty volume source makes an anonymous volume filled from the image,
	// removed with the sandbox.
	Source   string
	Target   string
	ReadOnly bool
	// TmpSize is the size of a tmpfs mount in bytes. Default 64 MiB.
	TmpSize int64
}

// SWEBenchProfile is the spec for official SWE-bench instance images: the
// repository is at /testbed inside the image and the eval script runs as
// root. /testbed becomes a fresh anonymous volume that the engine fills from
// the image, so it is writable while the root filesystem stays read-only.
// Root is the only relaxation; capabilities stay dropped and the network
// stays off.
func SWEBenchProfile(imageRef string) Spec {
	return Spec{
		Image:      imageRef,
		User:       "0:0",
		WorkingDir: "/testbed",
		Mounts:     []Mount{{Type: "volume", Target: "/testbed"}},
		Relax:      Relax{Root: true},
	}
}

// withDefaults returns s with zero fields set to their defaults.
func (s Spec) withDefaults() Spec {
	if s.WorkspaceTarget == "" {
		s.WorkspaceTarget = WorkspaceDir
	}
	if s.WorkingDir == "" && s.Workspace != "" {
		s.WorkingDir = s.WorkspaceTarget
	}
	if s.User == "" {
		s.User = DefaultUser
	}
	l := &s.Limits
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.NanoCPUs == 0 {
		l.NanoCPUs = DefaultNanoCPUs
	}
	if l.PidsLimit == 0 {
		l.PidsLimit = DefaultPidsLimit
	}
	if l.TmpSize == 0 {
		l.TmpSize = DefaultTmpSize
	}
	if l.NoFile == 0 {
		l.NoFile = DefaultNoFile
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSize
	}
	if l.LogSize == "" {
		l.LogSize = DefaultLogSize
	}
	return s
}

// Validate reports the first invalid field as a *SpecError.
func (s Spec) Validate() error {
	s = s.withDefaults()
	bad := func(field, format string, a ...any) error {
		return &SpecError{Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	if s.Image == "" {
		return bad("Image", "required")
	}
	if s.Workspace != "" && !filepath.IsAbs(s.Workspace) {
		return bad("Workspace", "host path %q must be absolute", s.Workspace)
	}
	if !path.IsAbs(s.WorkspaceTarget) {
		return bad("WorkspaceTarget", "%q must be an absolute container path", s.WorkspaceTarget)
	}
	if s.WorkingDir != "" && !path.IsAbs(s.WorkingDir) {
		return bad("WorkingDir", "%q must be an absolute container path", s.WorkingDir)
	}
	uid, _, err := parseUser(s.User)
	if err != nil {
		return bad("User", "%v", err)
	}
	if uid == 0 && !s.Relax.Root {
		return bad("User", "uid 0 needs Relax.Root")
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad("Env", "bad variable name %q", k)
		}
	}
	l := s.Limits
	switch {
	case l.Memory < 6<<20:
		return bad("Limits.Memory", "%d bytes is below the engine's 6 MiB minimum", l.Memory)
	case l.NanoCPUs < 0:
		return bad("Limits.NanoCPUs", "negative")
	case l.PidsLimit < 0:
		return bad("Limits.PidsLimit", "negative")
	case l.TmpSize < 0:
		return bad("Limits.TmpSize", "negative")
	case l.NoFile < 0:
		return bad("Limits.NoFile", "negative")
	case l.FileSize < 0:
		return bad("Limits.FileSize", "negative")
	}
	if _, err := units.FromHumanSize(l.LogSize); err != nil {
		return bad("Limits.LogSize", "%v", err)
	}
	for i, m := range s.Mounts {
		field := fmt.Sprintf("Mounts[%d]", i)
		switch m.Type {
		case "", "bind":
			if !filepath.IsAbs(m.Source) {
				return bad(field+".Source", "bind source %q must be an absolute host path", m.Source)
			}
		case "volume", "tmpfs":
		default:
			return bad(field+".Type", "unknown mount type %q", m.Type)
		}
		if !path.IsAbs(m.Target) || path.Clean(m.Target) == "/" {
			return bad(field+".Target", "%q must be an absolute container path other than /", m.Target)
		}
	}
	return nil
}

func parseUser(u string) (uid, gid int, err error) {
	us, gs, ok := strings.Cut(u, ":")
	if !ok {
		return 0, 0, fmt.Errorf("%q must be numeric uid:gid", u)
	}
	uid, err1 := strconv.Atoi(us)
	gid, err2 := strconv.Atoi(gs)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("%q must be numeric uid:gid", u)
	}
	return uid, gid, nil
}

// containerConfig turns a defaulted, valid spec into the engine's structs.
func (c *Client) containerConfig(s Spec, cmd []string, labels map[string]string) (*container.Config, *container.HostConfig) {
	env := []string{"HOME=" + HomeDir}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	cfg := &container.Config{
		Image:           s.Image,
		Cmd:             cmd,
		Entrypoint:      []string{},
		Env:             env,
		User:            s.User,
		WorkingDir:      s.WorkingDir,
		Labels:          labels,
		NetworkDisabled: s.Relax.Network == "",
		AttachStdout:    true,
		AttachStderr:    true,
	}
	l := s.Limits
	memSwap := l.Memory
	uid, gid, _ := parseUser(s.User) // validated
	init := !s.Relax.NoInit
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode("none"),
		ReadonlyRootfs: !s.Relax.WritableRootFS,
		CapDrop:        []string{"ALL"},
		CapAdd:         s.Relax.CapAdd,
		Init:           &init,
		Runtime:        s.Runtime,
		Tmpfs: map[string]string{
			"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,mode=1777", l.TmpSize),
			// HOME is a tmpfs of its own, owned by the user, so it exists
			// before any command runs without a command to create it.
			HomeDir: fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,uid=%d,gid=%d,mode=0700", l.TmpSize, uid, gid),
		},
		LogConfig: container.LogConfig{
			Type:   "json-file",
			Config: map[string]string{"max-size": l.LogSize, "max-file": "1"},
		},
		Resources: container.Resources{
			Memory:     l.Memory,
			MemorySwap: memSwap,
			NanoCPUs:   l.NanoCPUs,
			PidsLimit:  &l.PidsLimit,
			Ulimits: []*container.Ulimit{
				{Name: "nofile", Soft: l.NoFile, Hard: l.NoFile},
				{Name: "fsize", Soft: l.FileSize, Hard: l.FileSize},
			},
		},
	}
	if !s.Relax.NewPrivileges {
		hc.SecurityOpt = []string{"no-new-privileges"}
	}
	if s.Relax.Network != "" {
		hc.NetworkMode = container.NetworkMode(s.Relax.Network)
	}
	if s.Workspace != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: s.Workspace, Target: s.WorkspaceTarget})
	}
	for _, m := range s.Mounts {
		switch m.Type {
		case "volume":
			hc.Mounts = append(hc.Mounts, mount.Mount{
				Type: mount.TypeVolume, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly,
				VolumeOptions: &mount.VolumeOptions{Labels: labels},
			})
		case "tmpfs":
			size := m.TmpSize
			if size == 0 {
				size = 64 << 20
			}
			hc.Mounts = append(hc.Mounts, mount.Mount{
				Type: mount.TypeTmpfs, Target: m.Target, ReadOnly: m.ReadOnly,
				TmpfsOptions: &mount.TmpfsOptions{SizeBytes: size},
			})
		default:
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
		}
	}
	return cfg, hc
}
