// Package testenv is the engine fixture of the project's tests that need a
// Docker engine (sandbox, agent, swebench, the eval command, and the
// hostile-input, fault and load suites): a sandbox client on the local engine
// with a session of its own, counts of what a session left on the engine,
// stand-in engines for fault injection, and benchmark percentiles. It knows
// nothing of SWE-bench: the SWE-bench fixture is internal/swebenchtest, the
// cluster's is internal/kubetest.
//
// Every helper that needs the engine skips the test with a clear message when
// none answers or the test image is missing.
package testenv

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/sandbox"
)

// Image is the image the suites run: SWEBOX_TEST_IMAGE, else the one
// scripts/build-image.sh builds.
func Image() string {
	if img := os.Getenv("SWEBOX_TEST_IMAGE"); img != "" {
		return img
	}
	return sandbox.ProjectImage
}

// Session is a session id unique to the test and the moment.
func Session(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return "t-" + name[:min(len(name), 40)] + "-" + time.Now().Format("150405.000000")
}

// Client returns a client on the local engine with a session of its own,
// extra options applied after it. It skips the test when no engine answers
// or the test image is missing, and prunes the session when the test ends.
func Client(t testing.TB, opts ...sandbox.Option) *sandbox.Client {
	t.Helper()
	base := []sandbox.Option{sandbox.WithSession(Session(t))}
	if UnenforcedLimits() {
		base = append(base, sandbox.WithUnenforcedLimits(true))
	}
	c, err := sandbox.New(append(base, opts...)...)
	require.NoError(t, err)
	SkipWithoutEngine(t, c)
	t.Cleanup(func() {
		_, err := c.Prune(context.Background(), sandbox.PruneRequest{})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
	return c
}

// UnenforcedLimits reports whether SWEBOX_TEST_UNENFORCED_LIMITS=1 asks the
// suites' clients to run sandboxes whose cgroup limits the engine cannot
// enforce (sandbox.WithUnenforcedLimits): rootless Podman on a host without
// cgroup v2 delegation, where the suites then prove every other promise.
func UnenforcedLimits() bool { return os.Getenv("SWEBOX_TEST_UNENFORCED_LIMITS") == "1" }

// SkipWithoutEngine skips the test when c's engine does not answer or has
// no test image.
func SkipWithoutEngine(t testing.TB, c *sandbox.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		cienv.Skip(t, "no Docker engine answers (%v); this suite needs one", err)
	}
	ok, err := c.HasImage(ctx, Image())
	require.NoError(t, err)
	if !ok {
		cienv.Skip(t, "test image %s is missing; build it with scripts/build-image.sh", Image())
	}
}

// Leftovers counts the containers and volumes labelled with a session.
type Leftovers struct{ Containers, Volumes int }

// CountLeftovers counts what the session left on c's engine.
func CountLeftovers(t testing.TB, c *sandbox.Client, session string) Leftovers {
	t.Helper()
	objs, err := c.List(context.Background(), sandbox.ListRequest{Session: session})
	require.NoError(t, err)
	var l Leftovers
	for _, o := range objs {
		switch o.Kind {
		case sandbox.KindSandbox:
			l.Containers++
		case sandbox.KindVolume:
			l.Volumes++
		}
	}
	return l
}

// ReportPercentiles adds p50-ms and p95-ms metrics to a benchmark from the
// durations of its iterations.
func ReportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// SmallLimits keep a hostile prediction's damage small and the suites fast.
var SmallLimits = sandbox.Limits{
	Memory: 256 << 20, NanoCPUs: 1e9, PidsLimit: 128,
	TmpSize: 32 << 20, FileSize: 64 << 20,
}

// HostProcesses lists the host processes whose command line contains s:
// what a sandboxed program left running would show up as.
func HostProcesses(s string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		found = append(found, filepath.Base(d)+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return found
}

// Docker returns a Docker Engine client for c's engine, closed when the test
// ends, for tests that check what the engine itself shows (docker inspect),
// which the sandbox package does not expose.
func Docker(t testing.TB, c *sandbox.Client) *client.Client {
	t.Helper()
	dc, err := client.NewClientWithOpts(client.FromEnv, client.WithHost(c.Host()), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	t.Cleanup(func() { _ = dc.Close() })
	return dc
}
