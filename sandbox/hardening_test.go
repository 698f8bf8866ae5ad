package sandbox_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// Each test here proves one hardening default from inside a container, and
// where a relaxation exists, shows that the same probe sees the difference
// without the default, so the check can fail.

func TestRunsAsUID1000(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "import os; print(os.getuid(), os.getgid(), os.geteuid())"}})
		require.Equal(t, 0, res.ExitCode, res.Stderr.String())
		assert.Equal(t, "1000 1000 1000\n", res.Stdout.String())
	})
}

func TestRootFilesystemIsReadOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		probe := "open('/etc/probe','w').write('x'); print('wrote')"
		// Root inside the container, so permissions alone would allow the write.
		sb := createT(t, c, sandbox.Spec{User: "0:0", Relax: sandbox.Relax{Root: true}})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		assert.NotEqual(t, 0, res.ExitCode)
		assert.Contains(t, res.Stderr.String(), "Read-only file system")

		rw := createT(t, c, sandbox.Spec{User: "0:0", Relax: sandbox.Relax{Root: true, WritableRootFS: true}})
		res = execT(t, rw, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		assert.Equal(t, "wrote\n", res.Stdout.String(), "the probe must be able to see a writable root")
	})
}

func TestNetworkIsOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		probe := `
import socket
ifaces = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])
print(','.join(ifaces))
s = socket.socket(); s.settimeout(2)
try:
    s.connect(('192.0.2.1', 80)); print('connected')
except OSError as e:
    print('connect failed:', e.errno)
`
		if kube {
			// A pod has eth0; the default-deny NetworkPolicy is what stops
			// it, so the probe aims at an address a pod can otherwise reach:
			// the API server's.
			host, port := kubetest.APIHostPort(t)
			connect := fmt.Sprintf(`
import socket
s = socket.socket(); s.settimeout(3)
try:
    s.connect((%q, %s)); print('connected')
except OSError as e:
    print('connect failed:', e)
`, host, port)
			sb := createT(t, c, sandbox.Spec{})
			res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", connect}})
			assert.Contains(t, res.Stdout.String(), "connect failed", res.Stderr.String())
			reach := createT(t, c, sandbox.Spec{Relax: sandbox.Relax{Network: "pod"}})
			res = execT(t, reach, sandbox.ExecRequest{Cmd: []string{"python3", "-c", connect}})
			assert.Equal(t, "connected\n", res.Stdout.String(), "the probe must be able to reach the address without the policy")
			return
		}
		sb := createT(t, c, sandbox.Spec{})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		lines := strings.Split(strings.TrimSpace(res.Stdout.String()), "\n")
		require.Len(t, lines, 2, res.Stderr.String())
		assert.Equal(t, "lo", lines[0], "only the loopback interface")
		assert.Contains(t, lines[1], "connect failed: 101", "ENETUNREACH: no route leaves the sandbox")

		bridged := createT(t, c, sandbox.Spec{Relax: sandbox.Relax{Network: "bridge"}})
		res = execT(t, bridged, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		// eth0 on a bridge, tap0 on rootless Podman's slirp4netns.
		ifaces := strings.Split(strings.SplitN(res.Stdout.String(), "\n", 2)[0], ",")
		assert.Greater(t, len(ifaces), 1, "the probe must be able to see a network: %s", res.Stdout.String())
	})
}

func TestCapabilitiesAreDropped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		// As root, where capabilities would otherwise be effective.
		sb := createT(t, c, sandbox.Spec{User: "0:0", Relax: sandbox.Relax{Root: true}})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"grep", "^Cap", "/proc/self/status"}})
		caps := parseCaps(res.Stdout.String())
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			assert.Equal(t, "0000000000000000", caps[k], k)
		}
		withChown := createT(t, c, sandbox.Spec{User: "0:0", Relax: sandbox.Relax{Root: true, CapAdd: []string{"CHOWN"}}})
		res = execT(t, withChown, sandbox.ExecRequest{Cmd: []string{"grep", "^Cap", "/proc/self/status"}})
		assert.Equal(t, "0000000000000001", parseCaps(res.Stdout.String())["CapEff"], "the probe must see an added capability")
	})
}

func parseCaps(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

func TestSetuidDoesNotEscalate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		if kube {
			// Images cannot be built on the cluster; the flag the kernel sets
			// for allowPrivilegeEscalation: false is checked instead.
			sb := createT(t, c, sandbox.Spec{})
			res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"grep", "^NoNewPrivs", "/proc/self/status"}})
			assert.Equal(t, "NoNewPrivs:\t1\n", res.Stdout.String())
			loose := createT(t, c, sandbox.Spec{Relax: sandbox.Relax{NewPrivileges: true}})
			res = execT(t, loose, sandbox.ExecRequest{Cmd: []string{"grep", "^NoNewPrivs", "/proc/self/status"}})
			assert.Equal(t, "NoNewPrivs:\t0\n", res.Stdout.String(), "the probe must see the flag off when allowed")
			return
		}
		ctx := context.Background()
		// An image with a setuid-root copy of id(1), built with the library.
		ref := "swebox-test/setuid:" + strings.ToLower(c.Session()[len(c.Session())-6:])
		dockerfile := fmt.Sprintf("FROM %s\nRUN cp /usr/bin/id /usr/local/bin/suid-id && chmod 4755 /usr/local/bin/suid-id\n", testImage())
		_, err := c.BuildImage(ctx, sandbox.BuildRequest{Context: tarOf(t, map[string]string{"Dockerfile": dockerfile}), Tags: []string{ref}, NetworkMode: "none"})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, c.RemoveImage(context.Background(), ref)) })

		sb := createT(t, c, sandbox.Spec{Image: ref, Policy: sandbox.AllowAll()})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"/usr/local/bin/suid-id", "-u"}})
		assert.Equal(t, "1000\n", res.Stdout.String(), "no-new-privileges keeps the euid")

		loose := createT(t, c, sandbox.Spec{Image: ref, Relax: sandbox.Relax{NewPrivileges: true}, Policy: sandbox.AllowAll()})
		res = execT(t, loose, sandbox.ExecRequest{Cmd: []string{"/usr/local/bin/suid-id", "-u"}})
		assert.Equal(t, "0\n", res.Stdout.String(), "the probe must see setuid work when allowed")
	})
}

func tarOf(t testing.TB, files map[string]string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return &buf
}

func TestForkBombIsContained(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		limits := sandbox.Limits{PidsLimit: 64}
		if kube {
			limits = sandbox.Limits{} // the kubelet's podPidsLimit
		}
		sb := createT(t, c, sandbox.Spec{Limits: limits, Policy: sandbox.AllowAll()})
		bomb := `
import os, sys
failed = False
while True:
    try:
        os.fork()
    except OSError as e:
        if not failed:
            failed = True
            sys.stderr.write('fork refused: %s\n' % e.strerror); sys.stderr.flush()
`
		other := createT(t, c, sandbox.Spec{})
		done := make(chan sandbox.ExecResult, 1)
		go func() {
			res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"python3", "-c", bomb}, Timeout: 4 * time.Second})
			assert.NoError(t, err)
			done <- res
		}()
		time.Sleep(time.Second)
		// The engine and other sandboxes keep working during the bomb.
		res := execT(t, other, sandbox.ExecRequest{Cmd: []string{"echo", "alive"}})
		assert.Equal(t, "alive\n", res.Stdout.String())

		res = <-done
		assert.True(t, res.TimedOut)
		assert.Contains(t, res.Stderr.String(), "fork refused: Resource temporarily unavailable")
		// Afterwards the sandbox either works or says clearly that it does not.
		after, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"echo", "after"}})
		if err != nil {
			assert.ErrorIs(t, err, sandbox.ErrUnusable)
		} else {
			assert.Equal(t, "after\n", after.Stdout.String())
		}
	})
}

func TestMemoryHogIsOOMKilled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Limits: sandbox.Limits{Memory: 64 << 20}})
		hog := "a = []\nwhile True: a.append(bytearray(8 << 20))"
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", hog}, Timeout: 60 * time.Second})
		assert.False(t, res.TimedOut)
		assert.Equal(t, 137, res.ExitCode)
		assert.Equal(t, 9, res.Signal)
		assert.True(t, res.OOMKilled)

		// A command killed by SIGKILL for another reason is not flagged.
		res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}})
		assert.Equal(t, 9, res.Signal)
		assert.False(t, res.OOMKilled)

		// A child killed while the command lives on is seen by the counter.
		before, err := sb.OOMKills(context.Background())
		require.NoError(t, err)
		res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', " + fmt.Sprintf("%q", hog) + "]); print('parent lives')"}, Timeout: 60 * time.Second})
		assert.Equal(t, "parent lives\n", res.Stdout.String())
		assert.False(t, res.OOMKilled)
		after, err := sb.OOMKills(context.Background())
		require.NoError(t, err)
		assert.Greater(t, after, before)

		// One-shot runs report it too: on Docker from the container's
		// state, on Podman (whose state never says it) from the counter
		// of the sandbox the command ran in (Run).
		run, err := c.Run(context.Background(), sandbox.Spec{Image: testImage(), Limits: sandbox.Limits{Memory: 64 << 20}},
			sandbox.ExecRequest{Cmd: []string{"python3", "-c", hog}, Timeout: 60 * time.Second})
		require.NoError(t, err)
		assert.False(t, run.TimedOut)
		assert.Equal(t, 137, run.ExitCode)
		assert.Equal(t, 9, run.Signal)
		assert.True(t, run.OOMKilled)
	})
}

func TestFloodOfOutputIsCapped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const flood = 128 << 20
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", fmt.Sprintf("yes | head -c %d", flood)}, Timeout: 2 * time.Minute, OutputLimit: 64 << 10})
		runtime.GC()
		runtime.ReadMemStats(&after)
		require.False(t, res.TimedOut)
		assert.Equal(t, 0, res.ExitCode)
		assert.True(t, res.Stdout.Truncated)
		assert.Equal(t, int64(flood), res.Stdout.Total, "every byte is counted")
		assert.Equal(t, res.Stdout.Total, int64(len(res.Stdout.Head)+len(res.Stdout.Tail))+res.Stdout.Dropped)
		assert.LessOrEqual(t, len(res.Stdout.Head)+len(res.Stdout.Tail), 64<<10)
		assert.True(t, strings.HasPrefix(string(res.Stdout.Head), "y\ny\n"))
		assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(16<<20), "host memory must not grow with the guest's output")
	})
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		start := time.Now()
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{
			Cmd:     []string{"sh", "-c", "echo started; sleep 1000 & setsid sleep 1000 & sleep 1000"},
			Timeout: time.Second,
		})
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 100*time.Second, "the command's 1000 s sleeps were cut short")
		assert.True(t, res.TimedOut)
		assert.Equal(t, "started\n", res.Stdout.String(), "output so far is kept")

		ps := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}})
		assert.NotContains(t, ps.Stdout.String(), "sleep 1000", "no process of the command remains")
		// The sandbox is still usable.
		assert.Equal(t, "ok\n", execT(t, sb, sandbox.ExecRequest{Cmd: []string{"echo", "ok"}}).Stdout.String())
	})
}

// TestTimeoutKillBesideRunningCommands: a command times out while others run,
// so the in-sandbox kill runs in a process started after the command (under
// the exec agent, a fresh shim: no idle one is left). The kill takes only the
// command's processes, the others finish as they would, and the sandbox stays
// usable rather than being killed whole.
func TestTimeoutKillBesideRunningCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		var wg sync.WaitGroup
		others := make([]sandbox.ExecResult, 2)
		errs := make([]error, 2)
		for i := range others {
			wg.Add(1)
			go func() {
				defer wg.Done()
				others[i], errs[i] = sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", "sleep 6; echo done"}})
			}()
		}
		time.Sleep(time.Second) // both run before the command below starts
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{
			Cmd: []string{"sh", "-c", "sleep 1000 & sleep 1000"}, Timeout: time.Second,
		})
		require.NoError(t, err)
		assert.True(t, res.TimedOut)
		wg.Wait()
		for i := range others {
			require.NoError(t, errs[i])
			assert.Equal(t, 0, others[i].ExitCode, "a command beside the timed-out one is not killed")
			assert.Equal(t, "done\n", others[i].Stdout.String())
		}
		after, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}})
		require.NoError(t, err, "the sandbox stays usable: the kill took the command's processes one by one")
		assert.NotContains(t, after.Stdout.String(), "sleep 1000")
	})
}

// TestTimeoutKillsACommandThatStartedLate: on a loaded engine a command's
// exec can start after its time ran out, after the first kill found nothing
// of it. The kill is repeated while the command's stream is open, so the
// late process does not live on.
func TestTimeoutKillsACommandThatStartedLate(t *testing.T) {
	real := newClient(t)
	fe := testenv.NewFaultyEngine(t, real.Host(), func(string) bool { return false })
	c := newClient(t, sandbox.WithHost(fe.Host()), sandbox.WithExecAgent(false))
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	fe.DelayExecs("sleep 1007", 800*time.Millisecond)
	res, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"sh", "-c", "sleep 1007"}, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	fe.DelayExecs("", 0)
	ps := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}})
	assert.NotContains(t, ps.Stdout.String(), "sleep 1007", "the command that started after its first kill was killed too")
}

// TestTimeoutKillRunsOnceForACommandThatRan: a timed-out command whose
// process the first kill found and killed is not killed again after its
// stream ends: nothing of it can start after that kill, and each kill is an
// exec. The command is timed out by cancelling its context once it printed,
// so that it surely ran when the first kill came.
func TestTimeoutKillRunsOnceForACommandThatRan(t *testing.T) {
	real := newClient(t)
	fe := testenv.NewFaultyEngine(t, real.Host(), func(string) bool { return false })
	c := newClient(t, sandbox.WithHost(fe.Host()), sandbox.WithExecAgent(false))
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	kills := fe.CountExecs("swebox-kill")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo started; sleep 1009 & sleep 1009"}, Stdout: cancelOnWrite(cancel)})
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, res.TimedOut)
	assert.Equal(t, 1, kills(), "one kill, which found the command")
	ps := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}})
	assert.NotContains(t, ps.Stdout.String(), "sleep 1009")
}

func TestTimeoutSparesOtherCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		// A background process of an earlier command survives a later timeout.
		shT(t, sb, "setsid sleep 900 >/dev/null 2>&1 &")
		// A process that clears its environment is still killed with its command.
		res, err := sb.Exec(context.Background(), sandbox.ExecRequest{
			Cmd: []string{"sh", "-c", "env -i /bin/sleep 1000 & sleep 1000"}, Timeout: time.Second,
		})
		require.NoError(t, err)
		assert.True(t, res.TimedOut)
		ps := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}}).Stdout.String()
		assert.Contains(t, ps, "sleep 900")
		assert.NotContains(t, ps, "sleep 1000")
	})
}

func TestCancelledContextRemovesTheContainer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		ctx, cancel := context.WithCancel(context.Background())
		// Cancelled once the command runs: a pod takes seconds to start.
		started := cancelOnWrite(cancel)
		res, err := c.Run(ctx, sandbox.Spec{Image: testImage(), Policy: sandbox.AllowAll()},
			sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo started; exec sleep 1000"}, Stdout: started})
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, res.TimedOut)
		assert.Empty(t, sessionContainers(t, c))
	})
}

func TestPruneRemovesLeftovers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		ctx := context.Background()
		for range 2 {
			_, err := c.Create(ctx, sandbox.Spec{Image: testImage(), Mounts: []sandbox.Mount{{Type: "volume", Target: "/data"}}}) // left behind on purpose, with a volume
			require.NoError(t, err)
		}
		require.Len(t, sessionContainers(t, c), 2)
		res, err := c.Prune(ctx, sandbox.PruneRequest{})
		require.NoError(t, err)
		assert.Equal(t, 2, res.Containers)
		assert.Empty(t, sessionContainers(t, c))
		objs, err := c.List(ctx, sandbox.ListRequest{})
		require.NoError(t, err)
		assert.Empty(t, objs)
	})
}

func TestGVisorRuntime(t *testing.T) {
	c := newClient(t)
	rts, err := c.Runtimes(context.Background())
	require.NoError(t, err)
	if !slices.Contains(rts, "runsc") {
		cienv.Skip(t, "runtime runsc is not registered with this engine (have %v); see README to register gVisor", rts)
	}
	sb := createT(t, c, sandbox.Spec{Runtime: "runsc", Policy: sandbox.AllowAll()})
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "dmesg | head -1; id -u"}})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.Contains(t, res.Stdout.String(), "gVisor")
	assert.Contains(t, res.Stdout.String(), "1000")
	// A timeout kills the tree under gVisor too.
	res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "setsid sleep 1000 & sleep 1000"}, Timeout: time.Second})
	assert.True(t, res.TimedOut)
	assert.NotContains(t, execT(t, sb, sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}}).Stdout.String(), "sleep 1000")
}

// TestBindMountsAreReadOnlyUnlessRelaxed: a bind mount is writable from
// inside only with Relax.WritableMounts, the host's root and system paths
// and gid 0 are refused without their relaxations, before any engine call.
func TestBindMountsAreReadOnlyUnlessRelaxed(t *testing.T) {
	c := newClient(t)
	host := t.TempDir()
	require.NoError(t, os.Chmod(host, 0o777))
	probe := []string{"sh", "-c", "echo x > /data/probe && echo wrote"}

	ro := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll(), Mounts: []sandbox.Mount{{Source: host, Target: "/data", ReadOnly: true}}})
	res := execT(t, ro, sandbox.ExecRequest{Cmd: probe})
	assert.NotEqual(t, 0, res.ExitCode)
	assert.Contains(t, res.Stderr.String(), "Read-only file system")
	assert.NoFileExists(t, filepath.Join(host, "probe"))

	rw := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll(), Mounts: []sandbox.Mount{{Source: host, Target: "/data"}}, Relax: sandbox.Relax{WritableMounts: true}})
	res = execT(t, rw, sandbox.ExecRequest{Cmd: probe})
	require.Equal(t, 0, res.ExitCode, res.Stderr.String())
	assert.FileExists(t, filepath.Join(host, "probe"), "the same probe writes when relaxed")

	ctx := context.Background()
	for name, spec := range map[string]sandbox.Spec{
		"read-write bind": {Mounts: []sandbox.Mount{{Source: host, Target: "/data"}}},
		"docker socket":   {Mounts: []sandbox.Mount{{Source: "/var/run/docker.sock", Target: "/var/run/docker.sock", ReadOnly: true}}},
		"host root":       {Workspace: "/"},
		"tmpfs over /etc": {Mounts: []sandbox.Mount{{Type: "tmpfs", Target: "/etc"}}},
		"gid 0":           {User: "1000:0"},
	} {
		spec.Image = testImage()
		_, err := c.Create(ctx, spec)
		assert.ErrorIs(t, err, sandbox.ErrInvalidSpec, name)
	}
	_, err := ro.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"id"}, User: "1000:0"})
	assert.ErrorIs(t, err, sandbox.ErrInvalidSpec, "an exec as gid 0 needs Relax.Root too")
	assert.Len(t, sessionContainers(t, c), 2, "no refused spec reached the engine")

	root := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll(), User: "1000:0", Relax: sandbox.Relax{Root: true}})
	res = execT(t, root, sandbox.ExecRequest{Cmd: []string{"id", "-g"}})
	assert.Equal(t, "0\n", res.Stdout.String(), "relaxed, the group is root's")
}

// TestMainProcessCarriesItsMarker: the processes of a sandbox's main
// process (the keepalive and its background subshell) carry the main
// marker in their environment, so a timed-out command's kill, which takes
// an unmarked process that started after the command for the command's,
// spares them however late they started.
func TestMainProcessCarriesItsMarker(t *testing.T) {
	// The pattern is split in the script so that the script's own
	// command line does not match it.
	const script = `pat='while rea''d -r _'
for d in /proc/[0-9]*; do
  [ "${d#/proc/}" = "$$" ] && continue
  c=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null) || continue
  case "$c" in *"$pat"*) tr '\0' '\n' < "$d/environ" | grep -qx 'SWEBOX_EXEC=main' && echo "marked $c" || echo "unmarked $c";; esac
done`
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		out := shT(t, sb, script).Stdout.String()
		assert.Contains(t, out, "marked ", "the keepalive was found")
		assert.NotContains(t, out, "unmarked", "a process of the main process lacks the marker")
	})
}

// TestTimeoutKillAtOnceSparesTheSandbox: a command run as soon as its
// sandbox is created, and timed out at once, loses its processes, not the
// sandbox: the keepalive's subshell may start after the command did, and
// the kill must not take it for one of the command's. Without the main
// marker each of 6 runs failed, at round 0 to 8.
func TestTimeoutKillAtOnceSparesTheSandbox(t *testing.T) {
	c := newClient(t, sandbox.WithExecAgent(false))
	for i := range 10 {
		sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
		ctx, cancel := context.WithCancel(context.Background())
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo started; sleep 1013 & sleep 1013"}, Stdout: cancelOnWrite(cancel)})
		cancel()
		require.ErrorIs(t, err, context.Canceled, "round %d", i)
		assert.True(t, res.TimedOut)
		ps, err := sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"ps", "-eo", "args="}})
		require.NoError(t, err, "round %d: the sandbox stays usable", i)
		assert.NotContains(t, ps.Stdout.String(), "sleep 1013", "round %d", i)
		require.NoError(t, sb.Remove(context.Background()))
	}
}
