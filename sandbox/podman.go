package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Podman serves the Docker Engine API (`podman system service`), and the
// Docker backend runs sandboxes on it through that API with the same
// hardening. Where Podman reads the API differently, or runs rootless in a
// user namespace, the backend adapts the container it asks for (adaptPodman)
// and refuses what Podman cannot give (UnenforcedLimitsError).

// ErrLimitsNotEnforced: the engine cannot enforce a limit of Spec.Limits
// that lives in a cgroup (memory, CPU, processes), e.g. rootless Podman on
// a host without cgroup v2 delegation. An *UnenforcedLimitsError matches it.
var ErrLimitsNotEnforced = errors.New("limits not enforced by the engine")

// UnenforcedLimitsError reports a sandbox refused because its engine cannot
// enforce some of its limits. It matches ErrLimitsNotEnforced.
type UnenforcedLimitsError struct {
	Host string
	// Limits names the Limits fields the engine cannot enforce, e.g.
	// "Memory", "NanoCPUs", "PidsLimit".
	Limits []string
	// Reason says why, e.g. "rootless Podman with cgroup v1: no cgroup
	// controller is delegated to the engine's user".
	Reason string
}

func (e *UnenforcedLimitsError) Error() string {
	return fmt.Sprintf("engine %s cannot enforce %s (%s); enable cgroup v2 delegation for the engine's user, or accept unenforced limits with sandbox.WithUnenforcedLimits(true)",
		e.Host, strings.Join(e.Limits, ", "), e.Reason)
}

func (e *UnenforcedLimitsError) Is(target error) bool { return target == ErrLimitsNotEnforced }

// WithUnenforcedLimits lets sandboxes run on an engine that cannot enforce
// the cgroup limits of Spec.Limits (Memory, NanoCPUs, PidsLimit): rootless
// Podman on a host whose cgroups are v1, or v2 without the controllers
// delegated to the engine's user. Such a sandbox runs without those limits
// (the file-size and open-file limits, which are rlimits, and the /tmp and
// HOME sizes still hold), and every Create logs a warning naming what is
// not enforced. Default: false: Create refuses with an
// *UnenforcedLimitsError.
func WithUnenforcedLimits(allow bool) Option {
	return func(c *config) error {
		c.docker.unenforcedLimits = allow
		return nil
	}
}

// engineFacts is what the Docker backend learns of the engine behind the
// API on its first create.
type engineFacts struct {
	podman   bool
	rootless bool // Podman in a user namespace of an unprivileged user
	// cgroupControllers are the cgroup controllers the engine can put
	// limits in (Podman's host.cgroupControllers); nil when the engine does
	// not say (Docker, which enforces the limits it accepts).
	cgroupControllers []string
	cgroupVersion     string
}

// engineFactsCache holds a backend's engineFacts once read.
type engineFactsCache struct {
	mu    sync.Mutex
	facts *engineFacts
}

// podmanInfo is the part of Podman's GET /libpod/info the backend reads.
type podmanInfo struct {
	Host struct {
		CgroupVersion     string   `json:"cgroupVersion"`
		CgroupControllers []string `json:"cgroupControllers"`
		Security          struct {
			Rootless bool `json:"rootless"`
		} `json:"security"`
	} `json:"host"`
}

// facts reads the engine's facts once; a failed read is tried again by the
// next call.
func (d *dockerBackend) facts(ctx context.Context) (engineFacts, error) {
	d.factsCache.mu.Lock()
	defer d.factsCache.mu.Unlock()
	if f := d.factsCache.facts; f != nil {
		return *f, nil
	}
	v, err := d.api.ServerVersion(ctx)
	if err != nil {
		return engineFacts{}, fmt.Errorf("read engine version: %w", dockerErr(err))
	}
	var f engineFacts
	for _, c := range v.Components {
		if c.Name == "Podman Engine" {
			f.podman = true
		}
	}
	if f.podman {
		var pi podmanInfo
		if err := d.libpodGet(ctx, "/info", &pi); err != nil {
			return engineFacts{}, fmt.Errorf("read Podman's info: %w", err)
		}
		f.rootless = pi.Host.Security.Rootless
		f.cgroupVersion = pi.Host.CgroupVersion
		f.cgroupControllers = append([]string{}, pi.Host.CgroupControllers...)
	}
	d.factsCache.facts = &f
	return f, nil
}

// onPodman reports whether the engine is known to be Podman: its facts were
// read, which every create does first.
func (d *dockerBackend) onPodman() bool {
	d.factsCache.mu.Lock()
	defer d.factsCache.mu.Unlock()
	return d.factsCache.facts != nil && d.factsCache.facts.podman
}

// sharedMemoryCgroup reports whether the engine is known to be rootless
// Podman without the memory controller, whose containers have no memory
// cgroup of their own: on cgroup v1 a container stays in the cgroup of the
// service, whose oom_kill counter counts every OOM kill among the user's
// processes and the service's other sandboxes (an OOM kill before the
// sandbox started included), so swebox reads no OOM kill from it.
func (d *dockerBackend) sharedMemoryCgroup() bool {
	d.factsCache.mu.Lock()
	defer d.factsCache.mu.Unlock()
	f := d.factsCache.facts
	return f != nil && f.podman && f.rootless && !slices.Contains(f.cgroupControllers, "memory")
}

// libpodGet reads one of Podman's own endpoints (/libpod/...), which the
// Docker client has no method for, over the client's connection.
func (d *dockerBackend) libpodGet(ctx context.Context, path string, v any) error {
	hc := d.api.HTTPClient()
	proto, addr, _ := strings.Cut(d.api.DaemonHost(), "://")
	base := "http://localhost" // the transport dials the socket
	if proto == "tcp" || proto == "http" || proto == "https" {
		scheme := "http"
		if t, ok := hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
			scheme = "https"
		}
		base = scheme + "://" + addr
	}
	// Podman serves its API under any version prefix of its major version.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v4.0.0/libpod"+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return classified(errUnreachable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}

// adaptPodman changes a container's request for a Podman engine, from a
// defaulted, valid spec:
//   - HOME's tmpfs is handed to the sandbox's user with Podman's "U" option,
//     since Podman refuses tmpfs's uid= and gid= ("unknown mount option").
//   - Rootless, when this process is the engine's user, the sandbox's user
//     is mapped to this process's own uid (keep-id), so that the files this
//     process makes for it (the exec agent's socket directory, a workspace)
//     are the sandbox user's, as they are on a rootful engine; the sandbox's
//     root and every other uid map to the user's subordinate ids.
//   - Rootless without the cgroup controllers a limit needs, the create is
//     refused, or with WithUnenforcedLimits the limit is dropped and a
//     warning logged.
func (d *dockerBackend) adaptPodman(ctx context.Context, s Spec, cfg *container.Config, hc *container.HostConfig) (rlimits string, err error) {
	f, err := d.facts(ctx)
	if err != nil || !f.podman {
		return "", err
	}
	if opts, ok := hc.Tmpfs[HomeDir]; ok {
		kept := []string{}
		for _, o := range strings.Split(opts, ",") {
			if !strings.HasPrefix(o, "uid=") && !strings.HasPrefix(o, "gid=") {
				kept = append(kept, o)
			}
		}
		hc.Tmpfs[HomeDir] = strings.Join(append(kept, "U"), ",")
	}
	if !f.rootless {
		// Podman gives a rootful container RLIMIT_NPROC 1048576 unless
		// asked otherwise (Docker leaves the engine's own), which runc
		// cannot set on a host whose limit is lower (root without
		// CAP_SYS_RESOURCE, a VM kernel that caps it at pid_max): the
		// container fails to start with "error setting rlimit type 6".
		// pid_max is as good as no limit: no more processes can exist.
		if n := pidMax(); n > 0 && engineUser(d.Host()) == 0 {
			hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: "nproc", Soft: n, Hard: n})
		}
		return "", nil
	}
	// Rootless Podman 4.3 drops the Ulimits of a container created through
	// its Docker-compatible API (the same limits given to `podman run
	// --ulimit` hold). The shell sets them before it runs the main command,
	// and before each command of the engine's exec (withRlimits); those of
	// the exec agent descend from the main command.
	rlimits = shellRlimits(hc.Ulimits)
	if rlimits != "" {
		cfg.Cmd = append([]string{"/bin/sh", "-c", rlimits + ` && exec "$0" "$@"`}, cfg.Cmd...)
	}
	// Docker's default network, "bridge", is slirp4netns for rootless
	// Podman (its bridge needs a rootless network namespace it cannot
	// always make: "failed to mount runtime directory for rootless netns").
	if hc.NetworkMode == "bridge" {
		hc.NetworkMode = "slirp4netns"
	}
	// A sandbox of uid 0 (Relax.Root) needs no keep-id: rootless Podman
	// maps the container's root to the engine's user already. Podman 4.3
	// cannot map the user's group to gid 0 (runc fails), so a sandbox of
	// gid 0 keeps the container's gid 0 on a subordinate gid; the socket
	// directory is the user's by uid alone.
	if uid, gid, _ := parseUser(s.User); engineUser(d.Host()) == os.Getuid() && uid != 0 { // validated
		mode := fmt.Sprintf("keep-id:uid=%d,gid=%d", uid, gid)
		if gid == 0 {
			mode = fmt.Sprintf("keep-id:uid=%d", uid)
		}
		hc.UsernsMode = container.UsernsMode(mode)
	}
	var missing []string
	need := func(field, controller string, set bool) {
		if set && !slices.Contains(f.cgroupControllers, controller) {
			missing = append(missing, field)
		}
	}
	r := &hc.Resources
	need("Memory", "memory", r.Memory > 0)
	need("NanoCPUs", "cpu", r.NanoCPUs > 0)
	need("PidsLimit", "pids", r.PidsLimit != nil && *r.PidsLimit > 0)
	if len(missing) == 0 {
		return rlimits, nil
	}
	reason := fmt.Sprintf("rootless Podman with cgroup %s: the engine's user has the controllers %v", f.cgroupVersion, f.cgroupControllers)
	if f.cgroupVersion == "v1" {
		reason = "rootless Podman on a cgroup v1 host: no cgroup controller is delegated to an unprivileged user"
	}
	if !d.unenforcedLimits {
		return "", &UnenforcedLimitsError{Host: d.Host(), Limits: missing, Reason: reason}
	}
	d.log.Warn("sandbox limits not enforced", "limits", missing, "reason", reason)
	r.Memory, r.MemorySwap, r.NanoCPUs, r.PidsLimit = 0, 0, 0, nil
	return rlimits, nil
}

// keepIDRace is the words of rootless Podman 4.3's refusal of a keep-id
// container whose user's subordinate ids it failed to read. Debian's
// Podman reads /etc/subuid and /etc/subgid through shadow's libsubid,
// which is not safe for concurrent use: two keep-id creates at once in the
// service can make one of them find no range ("no subgid ranges found for
// group", "cannot read subids" in the service's log) and refuse the
// container, about 2 in 90 of 30 concurrent creates on the test machine,
// or crash the service with SIGSEGV in subid_get_gid_ranges
// (containers/storage#2030, podman#23264). A user without ranges gets the
// same words on every attempt.
const keepIDRace = "keep-id requires additional UIDs or GIDs defined in /etc/subuid and /etc/subgid"

// keepIDAttempts bounds the creates of one keep-id container.
const keepIDAttempts = 5

// keepIDCreates makes this process's keep-id creates one at a time, so
// that they never race in the service (keepIDRace); another process's
// creates still can, which the retry covers unless the service crashes.
var keepIDCreates sync.Mutex

// createContainer creates the container, a keep-id one while no other
// keep-id create of this process runs, and again, a few times with a
// short pause, when rootless Podman refuses a keep-id container for want
// of subordinate ids it failed to read (keepIDRace): the refused create
// made nothing, so another is safe.
func createContainer(ctx context.Context, api dockerAPI, cfg *container.Config, hc *container.HostConfig, name string) (container.CreateResponse, error) {
	keepID := strings.HasPrefix(string(hc.UsernsMode), "keep-id")
	create := func() (container.CreateResponse, error) {
		if keepID {
			keepIDCreates.Lock()
			defer keepIDCreates.Unlock()
		}
		return api.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	}
	for attempt := 1; ; attempt++ {
		resp, err := create()
		if err == nil || attempt == keepIDAttempts || !keepID || !strings.Contains(err.Error(), keepIDRace) {
			return resp, err
		}
		// Apart, so that creates that raced do not race again.
		pause := time.Duration(attempt)*20*time.Millisecond + time.Duration(mrand.Int64N(int64(20*time.Millisecond)))
		select {
		case <-ctx.Done():
			return resp, err
		case <-time.After(pause):
		}
	}
}

// shellRlimits is the POSIX shell that sets ulimits (soft and hard): "ulimit
// -n 4096 && ulimit -f 2097152", "" for none. ulimit -f counts 512-byte
// blocks; a size that is no multiple of 512 is rounded down.
func shellRlimits(ulimits []*container.Ulimit) string {
	var parts []string
	for _, u := range ulimits {
		switch u.Name {
		case "nofile":
			parts = append(parts, fmt.Sprintf("ulimit -n %d", u.Hard))
		case "fsize":
			parts = append(parts, fmt.Sprintf("ulimit -f %d", u.Hard/512))
		}
	}
	return strings.Join(parts, " && ")
}

// execStartScript runs "$0" "$@" as the engine's exec would, and reports a
// program that cannot start as the runtime does (startfail.go), not in the
// shell's words: 127 when it is not found, 126 when it is not executable,
// with runc's message on stderr. A name the shell resolves to a builtin or
// a function is run as exec runs it.
const execStartScript = `case $0 in
*/*) p=$0 ;;
*) p=$(command -v -- "$0") || { printf 'exec: "%s": executable file not found in $PATH\n' "$0" >&2; exit 127; } ;;
esac
case $p in
/*|*/*)
  [ -e "$p" ] || { printf 'exec: "%s": stat %s: no such file or directory\n' "$0" "$0" >&2; exit 127; }
  { [ -f "$p" ] && [ -x "$p" ]; } || { printf 'exec: "%s": permission denied\n' "$0" >&2; exit 126; } ;;
esac
exec "$0" "$@"`

// withRlimits returns cmd run by the shell that sets the rlimits of the
// container id, when Podman did not set them (adaptPodman).
func (d *dockerBackend) withRlimits(id string, cmd []string) []string {
	r, ok := d.rlimits.Load(id)
	if !ok {
		return cmd
	}
	return append([]string{"/bin/sh", "-c", r.(string) + " && {\n" + execStartScript + "\n}"}, cmd...)
}

// adaptInfo corrects a local engine's seam.Info for the user it runs as,
// and for Podman, whose archive endpoint follows a symbolic link in a bind
// mount (a copy out of /workspace/link, a link to /etc/passwd, gave a file
// where Docker's gives the link), so that copies go through tar in the
// sandbox, and whose rootless containers may share a memory cgroup
// (sharedMemoryCgroup). An
// engine that runs as another unprivileged user (rootless Podman or Docker
// of someone else) cannot open this process's private directories, so its
// sandboxes see no host files and reach no exec agent: workspaces are copied
// in and commands go through the engine's exec. Rootless Podman that runs as
// this process's user maps the sandbox's user to it (adaptPodman), so the
// agent's directory needs no chown.
func (d *dockerBackend) adaptInfo(i seam.Info) seam.Info {
	i.ArchiveFollowsLinks = d.onPodman()
	i.SharedMemoryCgroup = d.sharedMemoryCgroup()
	if !i.SharesHostFiles {
		return i
	}
	switch u := engineUser(d.Host()); {
	case u < 0 || u == 0:
	case u != os.Getuid():
		i.SharesHostFiles, i.AgentSocket = false, false
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if f, err := d.facts(ctx); err == nil && f.podman && f.rootless {
			i.SandboxUserIsCaller = true
		}
	}
	return i
}

// attachErr is the error of an attach to a created container that failed.
// Podman prepares the container for the attach and, when that fails, answers
// 409 with why, which the Docker client drops ("unable to upgrade to tcp,
// received 409"); a start reports the same failure with its message.
func (d *dockerBackend) attachErr(ctx context.Context, id string, err error) error {
	if !d.onPodman() {
		return dockerErr(err)
	}
	if serr := d.api.ContainerStart(ctx, id, container.StartOptions{}); serr != nil {
		return fmt.Errorf("%w: %w", dockerErr(err), dockerErr(serr))
	}
	return dockerErr(err)
}

// labelAnonVolume marks a volume the backend made on Podman for a mount with
// no source, which Docker would make anonymous: it goes with its sandbox
// (Remove).
const labelAnonVolume = "swebox.anonymous"

// podmanVolumes makes, on Podman, the volumes of hc's volume mounts that do
// not exist yet, with the mount's labels, and returns the names of those it
// made. Podman 4.3 ignores the labels of a volume made by a container's
// mount (VolumeOptions.Labels), so such a volume would escape the sweep of
// orphans (LabelOwner) and Prune (LabelSession); a named one would outlive
// its sandbox unlabelled. A mount with no source gets a volume named
// swebox-<random>, labelled labelAnonVolume, which Podman fills from the
// image on its first mount as Docker fills an anonymous one.
func (d *dockerBackend) podmanVolumes(ctx context.Context, hc *container.HostConfig) ([]string, error) {
	if !d.onPodman() {
		return nil, nil
	}
	var made []string
	for i := range hc.Mounts {
		m := &hc.Mounts[i]
		if m.Type != mount.TypeVolume || m.VolumeOptions == nil || len(m.VolumeOptions.Labels) == 0 {
			continue
		}
		labels := maps.Clone(m.VolumeOptions.Labels)
		if m.Source == "" {
			m.Source = "swebox-" + randomID(16)
			labels[labelAnonVolume] = "true"
		} else if _, err := d.api.VolumeInspect(ctx, m.Source); err == nil {
			continue // the caller's volume, as it is
		} else if !cerrdefs.IsNotFound(err) {
			d.removeVolumes(ctx, made)
			return nil, fmt.Errorf("inspect volume %s: %w", m.Source, dockerErr(err))
		}
		if _, err := d.api.VolumeCreate(ctx, volume.CreateOptions{Name: m.Source, Labels: labels}); err != nil {
			d.removeVolumes(ctx, made)
			return nil, fmt.Errorf("create volume %s: %w", m.Source, dockerErr(err))
		}
		made = append(made, m.Source)
		m.VolumeOptions = nil
	}
	return made, nil
}

// anonVolumes names the volumes of container id that podmanVolumes made for
// mounts with no source; nil on Docker, which removes anonymous volumes with
// their container.
func (d *dockerBackend) anonVolumes(ctx context.Context, id string) []string {
	if f, err := d.facts(ctx); err != nil || !f.podman {
		return nil
	}
	ci, err := d.api.ContainerInspect(ctx, id)
	if err != nil {
		return nil
	}
	var names []string
	for _, m := range ci.Mounts {
		if m.Type != mount.TypeVolume || m.Name == "" {
			continue
		}
		if v, err := d.api.VolumeInspect(ctx, m.Name); err == nil && v.Labels[labelAnonVolume] == "true" {
			names = append(names, m.Name)
		}
	}
	return names
}

// removeVolumes removes the named volumes, as far as it can: one still in
// use, or left by an error, is labelled for the sweep of orphans and Prune.
func (d *dockerBackend) removeVolumes(ctx context.Context, names []string) {
	for _, n := range names {
		if err := d.api.VolumeRemove(context.WithoutCancel(ctx), n, true); err != nil && !cerrdefs.IsNotFound(err) {
			d.log.Debug("remove a sandbox's volume", "volume", n, "cause", err)
		}
	}
}

// storeExecEnv keeps, for a container made on Podman, the HOSTNAME its main
// process has and Podman's exec does not give: Docker's exec gives every
// variable of the main process, the container's HOSTNAME too, and the exec
// agent, which descends from the main process, has them, so a command sees
// the same environment over either transport. Podman's hostname of a
// container with none set is its id's first 12 characters; a HOSTNAME in
// the spec's Env is in both already.
func (d *dockerBackend) storeExecEnv(s Spec, id string) {
	if _, set := s.Env["HOSTNAME"]; set || !d.onPodman() || len(id) < 12 {
		return
	}
	d.execEnv.Store(id, []string{"HOSTNAME=" + id[:12]})
}

// withExecEnv returns the environment of an engine exec in container id:
// env after what storeExecEnv kept, so that env's own values win.
func (d *dockerBackend) withExecEnv(id string, env []string) []string {
	v, ok := d.execEnv.Load(id)
	if !ok {
		return env
	}
	return append(slices.Clone(v.([]string)), env...)
}

// podmanStartFailed reports whether res, with the exec's status code, is
// Podman's answer to an exec whose process did not start
// (podmanStartFailure).
func podmanStartFailed(code int, res ExecResult) bool {
	_, ok := podmanStartFailure(code, res)
	return ok
}

// onPodman reports whether the client's engine is known to be Podman.
func (c *Client) onPodman() bool {
	d, ok := c.b.(*dockerBackend)
	return ok && d.onPodman()
}
