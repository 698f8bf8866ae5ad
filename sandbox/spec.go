package sandbox

import (
	"fmt"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"os"
	"path"
	"path/filepath"
	"strings"

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
	DefaultFileSize    = 1 << 30  // bytes, RLIMIT_FSIZE
	DefaultDisk        = 10 << 30 // bytes a writable root filesystem may hold
	DefaultLogSize     = "10m"
	DefaultOutputLimit = 1 << 20 // bytes kept per stream of a command
	WorkspaceDir       = "/workspace"
	HomeDir            = "/tmp/home"
)

// ProjectImage is the image scripts/build-image.sh builds from Debian
// packages (bookworm, python3 3.11, pytest, git; user 1000): the default of
// the agent toolkit and of SWE-bench's workspace mode. Spec.Image has no
// default.
const ProjectImage = "swebox/python:bookworm"

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
	// User as "uid:gid", numeric. Default 1000:1000. Root (uid 0) and the
	// root group (gid 0) need Relax.Root.
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
	// DefaultCommands().
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
	// Disk bounds the bytes of disk a sandbox with Relax.WritableRootFS
	// adds to its image (the container's writable layer): a sandbox past
	// it is killed and its commands fail with a *DiskLimitError (see
	// disk.go for how each engine measures). Default 10 GiB.
	Disk int64
}

// Relax loosens the default hardening. Every field's zero value keeps it.
type Relax struct {
	// Network attaches the sandbox to this Docker network (e.g. "bridge")
	// instead of none.
	Network string
	// WritableRootFS makes the root filesystem writable: copy-on-write
	// over the image, as a plain container's, gone with the sandbox and
	// bounded by Limits.Disk. A writable mount
	// (tmpfs, volume or bind) over a directory of the system (/etc, /usr,
	// /bin, /sbin, /lib*, /boot) makes part of it writable, and needs it
	// too.
	WritableRootFS bool
	// Root allows running as uid 0 or with gid 0 (still without
	// capabilities).
	Root bool
	// WritableMounts lets Mounts bind host paths read-write. Without it
	// every bind mount must be ReadOnly. The Workspace, the one host
	// directory a spec names to be written, is always writable.
	WritableMounts bool
	// HostSystemPaths lets the Workspace or a bind mount's source be the
	// host's root, one of its system directories (/proc, /sys, /dev, /run,
	// /var/run, /etc, /boot, the engines' state under /var/lib) or a
	// directory holding one, or a socket (a name ending in .sock, or a
	// socket on this machine): through them a sandbox reaches the host or
	// the engine. The Docker socket is root on the host even when mounted
	// read-only.
	HostSystemPaths bool
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
	if l.Disk == 0 {
		l.Disk = DefaultDisk
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
	uid, gid, err := parseUser(s.User)
	if err != nil {
		return bad("User", "%v", err)
	}
	if (uid == 0 || gid == 0) && !s.Relax.Root {
		return bad("User", "uid 0 or gid 0 needs Relax.Root")
	}
	if s.Workspace != "" && !s.Relax.HostSystemPaths {
		if why := hostSystemPath(s.Workspace); why != "" {
			return bad("Workspace", "%q is %s; that needs Relax.HostSystemPaths", s.Workspace, why)
		}
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
	case l.Disk < 0:
		return bad("Limits.Disk", "negative")
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
			if !s.Relax.HostSystemPaths {
				if why := hostSystemPath(m.Source); why != "" {
					return bad(field+".Source", "%q is %s; that needs Relax.HostSystemPaths", m.Source, why)
				}
			}
			if !m.ReadOnly && !s.Relax.WritableMounts {
				return bad(field+".ReadOnly", "a read-write bind mount of %q needs Relax.WritableMounts", m.Source)
			}
		case "volume", "tmpfs":
		default:
			return bad(field+".Type", "unknown mount type %q", m.Type)
		}
		if !path.IsAbs(m.Target) || path.Clean(m.Target) == "/" {
			return bad(field+".Target", "%q must be an absolute container path other than /", m.Target)
		}
		if d := under(m.Target, kernelDirs); d != "" {
			return bad(field+".Target", "%q is under %s, which the engine provides", m.Target, d)
		}
		if d := under(m.Target, systemDirs); d != "" && !m.ReadOnly && !s.Relax.WritableRootFS {
			return bad(field+".ReadOnly", "a writable mount at %q makes %s writable, which needs Relax.WritableRootFS", m.Target, d)
		}
	}
	return nil
}

// Directories of a sandbox's filesystem that mounts may not cover, or cover
// writably only with Relax.WritableRootFS.
var (
	kernelDirs = []string{"/proc", "/sys", "/dev"}
	systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot"}
)

// hostDirs are host directories through which a sandbox would reach the
// host or its engines.
var hostDirs = []string{
	"/proc", "/sys", "/dev", "/run", "/var/run", "/etc", "/boot",
	"/var/lib/docker", "/var/lib/containerd", "/var/lib/kubelet",
}

// under returns the directory of dirs that p is or lies under, or "".
func under(p string, dirs []string) string {
	p = path.Clean(p)
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

// hostSystemPath says why a host path must not be given to a sandbox
// without Relax.HostSystemPaths, or returns "". The path is checked as
// written and, when it exists on this machine, with its symlinks resolved.
func hostSystemPath(p string) string {
	check := func(p string) string {
		p = filepath.ToSlash(filepath.Clean(p))
		if p == "/" {
			return "the host's root"
		}
		if d := under(p, hostDirs); d != "" {
			return "under the host's " + d
		}
		for _, d := range hostDirs {
			if strings.HasPrefix(d, p+"/") {
				return "a directory holding the host's " + d
			}
		}
		if strings.HasSuffix(p, ".sock") {
			return "a socket"
		}
		return ""
	}
	if why := check(p); why != "" {
		return why
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if why := check(real); why != "" {
			return why
		}
		if fi, err := os.Stat(real); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "a socket"
		}
	}
	return ""
}

func parseUser(u string) (uid, gid int, err error) { return seam.ParseUser(u) }
