package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/tlsconfig"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// dockerAPI lists the Docker Engine client methods the Docker backend calls.
// *client.Client satisfies it; the package's tests wrap it to inject faults.
type dockerAPI interface {
	Ping(ctx context.Context) (types.Ping, error)
	Info(ctx context.Context) (system.Info, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerAttach(ctx context.Context, containerID string, options container.AttachOptions) (types.HijackedResponse, error)
	ContainerWait(ctx context.Context, containerID string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerStop(ctx context.Context, containerID string, options container.StopOptions) error
	ContainerKill(ctx context.Context, containerID, signal string) error
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerLogs(ctx context.Context, containerID string, options container.LogsOptions) (io.ReadCloser, error)
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
	ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error)
	CopyToContainer(ctx context.Context, containerID, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
	CopyFromContainer(ctx context.Context, containerID, srcPath string) (io.ReadCloser, container.PathStat, error)
	ImageInspect(ctx context.Context, imageID string, inspectOpts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, refStr string, options image.PullOptions) (io.ReadCloser, error)
	ImageBuild(ctx context.Context, buildContext io.Reader, options build.ImageBuildOptions) (build.ImageBuildResponse, error)
	ImageImport(ctx context.Context, source image.ImportSource, ref string, options image.ImportOptions) (io.ReadCloser, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
	ImageTag(ctx context.Context, source, target string) error
	ImagePush(ctx context.Context, ref string, options image.PushOptions) (io.ReadCloser, error)
	VolumeList(ctx context.Context, options volume.ListOptions) (volume.ListResponse, error)
	VolumeCreate(ctx context.Context, options volume.CreateOptions) (volume.Volume, error)
	VolumeInspect(ctx context.Context, volumeID string) (volume.Volume, error)
	VolumeRemove(ctx context.Context, volumeID string, force bool) error
	NetworkList(ctx context.Context, options network.ListOptions) ([]network.Summary, error)
	NetworkRemove(ctx context.Context, networkID string) error
	ServerVersion(ctx context.Context) (types.Version, error)
	HTTPClient() *http.Client
	DaemonHost() string
	Close() error
}

// dockerConfig is what the Docker options set.
type dockerConfig struct {
	host       string
	apiVersion string
	tls        *tlsFiles
	api        dockerAPI // set by the package's tests only
	// unenforcedLimits: WithUnenforcedLimits (podman.go).
	unenforcedLimits bool
}

type tlsFiles struct{ ca, cert, key string }

// conflict refuses Docker options given beside another backend.
func (d dockerConfig) conflict() error {
	var set []string
	if d.host != "" {
		set = append(set, "WithHost")
	}
	if d.apiVersion != "" {
		set = append(set, "WithAPIVersion")
	}
	if d.tls != nil {
		set = append(set, "WithTLS")
	}
	if d.api != nil {
		set = append(set, "WithDockerAPI")
	}
	if len(set) > 0 {
		return fmt.Errorf("%s: Docker options do not apply beside WithBackend", strings.Join(set, ", "))
	}
	return nil
}

// dockerBackend runs each sandbox as a Docker container.
type dockerBackend struct {
	api   dockerAPI
	owned bool // api was made here and is closed by close
	// records holds, by container id, the *mainRecord of each sandbox
	// this client leased until it is removed (lease.go).
	records sync.Map
	// What the engine is (Docker, Podman rootful or rootless) and what
	// follows from it; podman.go.
	factsCache       engineFactsCache
	unenforcedLimits bool
	rlimits          sync.Map // container id -> shell that sets its rlimits (podman.go)
	execEnv          sync.Map // container id -> variables the engine's exec lacks (podman.go)
	log              *slog.Logger
}

var (
	_ Backend        = (*dockerBackend)(nil)
	_ seam.Describer = (*dockerBackend)(nil)
	_ archiver       = (*dockerBackend)(nil)
	_ imageBackend   = (*dockerBackend)(nil)
	_ imagePusher    = (*dockerBackend)(nil)
	_ leaser         = (*dockerBackend)(nil)
)

// newDocker builds the Docker backend from the environment (DOCKER_HOST,
// DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY) and cfg.
func newDocker(cfg dockerConfig) (*dockerBackend, error) {
	if cfg.api != nil {
		return &dockerBackend{api: cfg.api, unenforcedLimits: cfg.unenforcedLimits}, nil
	}
	copts := []client.Opt{client.WithHostFromEnv(), client.WithVersionFromEnv()}
	if cfg.host != "" {
		copts = append(copts, client.WithHost(cfg.host))
	}
	if cfg.tls == nil {
		if dir := os.Getenv("DOCKER_CERT_PATH"); dir != "" {
			cfg.tls = &tlsFiles{
				ca:   filepath.Join(dir, "ca.pem"),
				cert: filepath.Join(dir, "cert.pem"),
				key:  filepath.Join(dir, "key.pem"),
			}
		}
	}
	if cfg.tls != nil {
		hc, err := tlsHTTPClient(*cfg.tls, os.Getenv("DOCKER_TLS_VERIFY") != "" || cfg.tls.ca != "")
		if err != nil {
			return nil, fmt.Errorf("configure TLS: %w", err)
		}
		copts = append(copts, client.WithHTTPClient(hc))
	}
	if cfg.apiVersion != "" {
		copts = append(copts, client.WithVersion(cfg.apiVersion))
	} else if os.Getenv("DOCKER_API_VERSION") == "" {
		copts = append(copts, client.WithAPIVersionNegotiation())
	}
	cli, err := client.NewClientWithOpts(copts...)
	if err != nil {
		return nil, fmt.Errorf("create docker client: %w", err)
	}
	return &dockerBackend{api: cli, owned: true, unenforcedLimits: cfg.unenforcedLimits}, nil
}

func tlsHTTPClient(f tlsFiles, verify bool) (*http.Client, error) {
	tc, err := tlsconfig.Client(tlsconfig.Options{
		CAFile:             f.ca,
		CertFile:           f.cert,
		KeyFile:            f.key,
		InsecureSkipVerify: !verify,
		ExclusiveRootPools: true,
	})
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, CheckRedirect: client.CheckRedirect}, nil
}

// dockerErr classifies an engine error for the logic above the seam.
func dockerErr(err error) error {
	switch {
	case err == nil:
		return nil
	case client.IsErrConnectionFailed(err) || isDialError(err):
		return classified(errUnreachable, err)
	case cerrdefs.IsNotFound(err), strings.HasSuffix(err.Error(), ": no such container"):
		// Podman answers 500 with "no such container" for a container
		// removed while the request was under way (a kill of a sandbox
		// whose AutoRemove is running).
		return classified(errNotFound, err)
	case cerrdefs.IsConflict(err), strings.HasSuffix(err.Error(), ": container state improper"):
		// Podman answers 500 with "container state improper" for a
		// container whose state changed while the request was under way
		// (a kill of a sandbox that was exiting).
		return classified(errConflict, err)
	}
	return err
}

// Bind takes the client's logger.
func (d *dockerBackend) Bind(env seam.Env[Spec]) { d.log = env.Log }

func (d *dockerBackend) Host() string { return d.api.DaemonHost() }

// Info: an engine reached over a local socket runs sandboxes on this
// machine, whose bind mounts show the host's files; the exec agent's
// socket directory is such a mount, on Unix.
func (d *dockerBackend) Info() seam.Info {
	h := d.Host()
	unix := strings.HasPrefix(h, "unix://")
	return d.adaptInfo(seam.Info{SharesHostFiles: unix || strings.HasPrefix(h, "npipe://"), AgentSocket: unix})
}

func (d *dockerBackend) Close() error {
	if !d.owned {
		return nil
	}
	return d.api.Close()
}

func (d *dockerBackend) Ping(ctx context.Context) error {
	_, err := d.api.Ping(ctx)
	return dockerErr(err)
}

func (d *dockerBackend) Runtimes(ctx context.Context) ([]string, error) {
	info, err := d.api.Info(ctx)
	if err != nil {
		return nil, dockerErr(err)
	}
	names := make([]string, 0, len(info.Runtimes))
	for name := range info.Runtimes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

func (d *dockerBackend) Create(ctx context.Context, req createRequest) (string, error) {
	cfg, hc := containerConfig(req.Spec, req.Cmd, req.Labels)
	if req.Stdin {
		cfg.OpenStdin, cfg.StdinOnce, cfg.AttachStdin = true, true, true
	}
	hc.AutoRemove = req.Leased
	rlimits, err := d.adaptPodman(ctx, req.Spec, cfg, hc)
	if err != nil {
		return "", err
	}
	made, err := d.podmanVolumes(ctx, hc)
	if err != nil {
		return "", err
	}
	resp, err := createContainer(ctx, d.api, cfg, hc, req.Spec.Name)
	if err != nil {
		d.removeVolumes(ctx, made)
		return "", dockerErr(err)
	}
	if rlimits != "" {
		d.rlimits.Store(resp.ID, rlimits)
	}
	d.storeExecEnv(req.Spec, resp.ID)
	return resp.ID, nil
}

func (d *dockerBackend) Start(ctx context.Context, id string) error {
	return dockerErr(d.api.ContainerStart(ctx, id, container.StartOptions{}))
}

func (d *dockerBackend) StartAttached(ctx context.Context, id string, s stdio) (*mainProcess, error) {
	hj, err := d.api.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true, Stdin: s.Stdin != nil})
	if err != nil {
		return nil, fmt.Errorf("attach container: %w", d.attachErr(ctx, id, err))
	}
	// Wait before starting, so that an exit right after the start is seen.
	waitC, waitErrC := d.api.ContainerWait(context.WithoutCancel(ctx), id, container.WaitConditionNextExit)
	if err := d.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		hj.Close()
		return nil, fmt.Errorf("start container: %w", dockerErr(err))
	}
	copied := pump(hj, s)
	exited := make(chan mainExit, 1)
	go func() {
		select {
		case w := <-waitC:
			<-copied
			exited <- mainExit{Code: int(w.StatusCode)}
		case err := <-waitErrC:
			exited <- mainExit{Code: -1, Err: fmt.Errorf("wait for container: %w", dockerErr(err))}
		}
	}()
	return &mainProcess{Exited: exited, Release: hj.Close}, nil
}

func (d *dockerBackend) Exec(ctx context.Context, id string, req execCall) (execStatus, error) {
	created, err := d.api.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd: d.withRlimits(id, req.Cmd), Env: d.withExecEnv(id, req.Env), WorkingDir: req.WorkingDir, User: req.User,
		AttachStdin: req.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return execStatus{}, fmt.Errorf("create exec: %w", dockerErr(err))
	}
	hj, err := d.api.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return execStatus{}, fmt.Errorf("start exec: %w", dockerErr(err))
	}
	defer hj.Close()
	copied := pump(hj, req.Stdio)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	select {
	case <-copied:
	case <-d.watchExit(watchCtx, created.ID):
		// The command is gone but something it started in the background
		// may still hold the output open; take what is buffered and go.
		select {
		case <-copied:
		case <-time.After(200 * time.Millisecond):
		}
	case <-ctx.Done():
	}
	_ = hj.Conn.Close()
	<-copied // ends at once on the closed connection

	icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	info, err := d.api.ContainerExecInspect(icx, created.ID)
	if err != nil {
		return execStatus{}, fmt.Errorf("inspect exec: %w", dockerErr(err))
	}
	// The engine accepts an exec in a container that stops before the
	// exec's process starts, and writes why it failed into the output
	// stream; such an exec never had a pid. Podman refuses such an exec,
	// and shows no pid for one that ended (podman.go).
	return execStatus{ExitCode: info.ExitCode, Running: info.Running, NoProcess: info.Pid == 0 && !info.Running && !d.onPodman()}, nil
}

// watchExit closes the returned channel once the exec is no longer running.
// It polls with backoff; the attach stream usually ends first.
func (d *dockerBackend) watchExit(ctx context.Context, execID string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		delay := 50 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			info, err := d.api.ContainerExecInspect(ctx, execID)
			if err == nil && !info.Running {
				close(done)
				return
			}
			delay = min(delay*2, time.Second)
		}
	}()
	return done
}

// pump copies a hijacked connection's multiplexed output to s's writers and
// s.stdin into it. The returned channel is closed when the output ends.
// Copying stdin stops when the connection closes.
func pump(hj types.HijackedResponse, s stdio) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = stdcopy.StdCopy(s.Stdout, s.Stderr, hj.Reader)
	}()
	if s.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, s.Stdin)
			_ = hj.CloseWrite()
		}()
	}
	return done
}

func (d *dockerBackend) Inspect(ctx context.Context, id string) (State, error) {
	info, err := d.api.ContainerInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		// The engine removed a leased sandbox whose main process ended.
		if rec, ok := d.ended(ctx, id); ok {
			return rec.st, nil
		}
	}
	if err != nil {
		return State{}, dockerErr(err)
	}
	if info.State == nil {
		return State{}, nil
	}
	return State{Running: info.State.Running, ExitCode: info.State.ExitCode, OOMKilled: info.State.OOMKilled}, nil
}

func (d *dockerBackend) Logs(ctx context.Context, id, tail string, stdout, stderr io.Writer) error {
	rc, err := d.api.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail})
	if cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		// Removed, or being removed ("can not get logs from container
		// which is dead or marked for removal"): the lease kept the end.
		if rec, ok := d.ended(ctx, id); ok {
			if err := writeTail(stdout, rec.stdout.Output(), tail); err != nil {
				return err
			}
			return writeTail(stderr, rec.stderr.Output(), tail)
		}
	}
	if err != nil {
		return dockerErr(err)
	}
	defer rc.Close()
	_, err = stdcopy.StdCopy(stdout, stderr, rc)
	return err
}

func (d *dockerBackend) Stop(ctx context.Context, id string, grace time.Duration) error {
	secs := int(grace.Seconds())
	return dockerErr(d.api.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}))
}

func (d *dockerBackend) Kill(ctx context.Context, id, signal string) error {
	return dockerErr(d.api.ContainerKill(ctx, id, signal))
}

func (d *dockerBackend) Remove(ctx context.Context, id string) error {
	anon := d.anonVolumes(ctx, id)
	err := d.removeContainer(ctx, id)
	if err == nil || errors.Is(err, errNotFound) {
		d.removeVolumes(ctx, anon)
		d.records.Delete(id)
		d.rlimits.Delete(id)
		d.execEnv.Delete(id)
	}
	return err
}

// removeContainer removes a container and returns once it is gone. An
// engine answers a removal with a conflict while another is under way (the
// AutoRemove of a leased sandbox whose main process just ended, a kill
// racing its exit on Podman); the removal is asked again until the engine
// answers that the container is gone, so that a sandbox removed is one no
// longer listed.
func (d *dockerBackend) removeContainer(ctx context.Context, id string) error {
	for {
		err := dockerErr(d.api.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true}))
		if !errors.Is(err, errConflict) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still being removed when %w)", err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (d *dockerBackend) CopyIn(ctx context.Context, id, dir string, tar io.Reader) error {
	return dockerErr(d.api.CopyToContainer(ctx, id, dir, tar, container.CopyToContainerOptions{}))
}

func (d *dockerBackend) CopyOut(ctx context.Context, id, src string) (io.ReadCloser, error) {
	rc, _, err := d.api.CopyFromContainer(ctx, id, src)
	if cerrdefs.IsNotFound(err) {
		// The engine answers 404 for a missing container and for a
		// missing path alike; the container answering tells them apart.
		if _, ierr := d.api.ContainerInspect(ctx, id); ierr == nil {
			return nil, &fs.PathError{Op: "copy out", Path: src, Err: fs.ErrNotExist}
		}
	}
	return rc, dockerErr(err)
}

// list returns containers, then volumes, then networks, so that removing
// them in order removes each before what it uses.
func (d *dockerBackend) List(ctx context.Context, labels map[string]string) ([]Object, error) {
	f := filters.NewArgs()
	for k, v := range labels {
		if v == "" {
			f.Add("label", k)
		} else {
			f.Add("label", k+"="+v)
		}
	}
	var objs []Object
	cs, err := d.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", dockerErr(err))
	}
	for _, c := range cs {
		name := ""
		if len(c.Names) > 0 {
			name = c.Names[0]
		}
		objs = append(objs, Object{Kind: KindSandbox, ID: c.ID, Name: name, Labels: c.Labels})
	}
	vs, err := d.api.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", dockerErr(err))
	}
	for _, v := range vs.Volumes {
		objs = append(objs, Object{Kind: KindVolume, ID: v.Name, Name: v.Name, Labels: v.Labels})
	}
	ns, err := d.api.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", dockerErr(err))
	}
	for _, n := range ns {
		objs = append(objs, Object{Kind: KindNetwork, ID: n.ID, Name: n.Name, Labels: n.Labels})
	}
	return objs, nil
}

func (d *dockerBackend) RemoveObject(ctx context.Context, o Object) error {
	switch o.Kind {
	case KindSandbox:
		return d.Remove(ctx, o.ID)
	case KindVolume:
		return dockerErr(d.api.VolumeRemove(ctx, o.ID, true))
	case KindNetwork:
		return dockerErr(d.api.NetworkRemove(ctx, o.ID))
	}
	return fmt.Errorf("remove %s %s: unknown kind", o.Kind, o.ID)
}

// containerConfig turns a defaulted, valid spec into the engine's structs.
func containerConfig(s Spec, cmd []string, labels map[string]string) (*container.Config, *container.HostConfig) {
	env := []string{"HOME=" + HomeDir}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	env = append(env, markerVar+"="+seam.MainMarker)
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
