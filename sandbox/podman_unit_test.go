package sandbox

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// output is an Output holding s.
func output(s string) Output {
	b := newCapBuffer(0)
	_, _ = io.WriteString(b, s)
	return b.Output()
}

// TestPodmanStartFailure: Podman's answer to an exec whose process did not
// start is told from a command's own output, and the runtime's reason is
// taken out of Podman's framing.
func TestPodmanStartFailure(t *testing.T) {
	const notFound = "Error: runc: exec failed: unable to start container process: exec: \"x\": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found\n" +
		"Error: read unixpacket @->/proc/self/fd/14/attach: read: connection reset by peer\n"
	for _, tc := range []struct {
		name           string
		code           int
		stdout, stderr string
		want           string
		ok             bool
	}{
		{"not found", 127, "", notFound, `exec: "x": executable file not found in $PATH`, true},
		{"permission denied", 126, "", "Error: runc: exec failed: unable to start container process: exec: \"/etc/passwd\": permission denied: OCI permission denied\n",
			`exec: "/etc/passwd": permission denied`, true},
		{"a command's own status", 1, "", notFound, "", false},
		{"a command that printed", 127, "out\n", notFound, "", false},
		{"a shell's words", 127, "", "sh: 1: x: not found\n", "", false},
		{"framing on a later line", 127, "", "first\n" + notFound, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, ok := podmanStartFailure(tc.code, ExecResult{Stdout: output(tc.stdout), Stderr: output(tc.stderr)})
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, reason)
		})
	}
}

// refusingCreate answers the first refusals creates with err, then creates.
type refusingCreate struct {
	dockerAPI
	refusals int
	err      error
	calls    int
}

func (r *refusingCreate) ContainerCreate(context.Context, *container.Config, *container.HostConfig, *network.NetworkingConfig, *ocispec.Platform, string) (container.CreateResponse, error) {
	r.calls++
	if r.calls <= r.refusals {
		return container.CreateResponse{}, r.err
	}
	return container.CreateResponse{ID: "made"}, nil
}

// TestCreateRetriesKeepIDRace: rootless Podman's refusal of a keep-id
// container for subordinate ids it failed to read (its answer, as the
// client reports it, captured from 30 concurrent creates on the test
// machine's Podman 4.3.1) is asked again, a bounded number of times;
// another refusal, or the same words for a container without keep-id, is
// the caller's at once.
func TestCreateRetriesKeepIDRace(t *testing.T) {
	race := errors.New("Error response from daemon: container create: keep-id requires additional UIDs or GIDs defined in /etc/subuid and /etc/subgid to function correctly: %!w(<nil>)")
	other := errors.New("Error response from daemon: container create: no such image")
	for _, tc := range []struct {
		name      string
		userns    container.UsernsMode
		refusals  int
		err       error
		wantCalls int
		wantErr   error
	}{
		{"raced twice", "keep-id:uid=1000,gid=1000", 2, race, 3, nil},
		{"no ranges", "keep-id:uid=1000,gid=1000", 100, race, keepIDAttempts, race},
		{"another refusal", "keep-id:uid=1000,gid=1000", 1, other, 1, other},
		{"no keep-id", "", 1, race, 1, race},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &refusingCreate{refusals: tc.refusals, err: tc.err}
			resp, err := createContainer(context.Background(), api, &container.Config{}, &container.HostConfig{UsernsMode: tc.userns}, "")
			assert.Equal(t, tc.wantCalls, api.calls)
			if tc.wantErr != nil {
				assert.Equal(t, tc.wantErr, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "made", resp.ID)
		})
	}
}

// TestSharedMemoryCgroup: the sandboxes of rootless Podman without the
// memory controller share the engine's memory cgroup (Info says so, and
// OOMKills then reads no count); with the controller (cgroup v2
// delegation), on rootful Podman and on Docker each has its own.
func TestSharedMemoryCgroup(t *testing.T) {
	all := []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids"}
	for _, tc := range []struct {
		name   string
		facts  *engineFacts
		shared bool
	}{
		{"facts not read", nil, false},
		{"docker", &engineFacts{}, false},
		{"rootful podman v1", &engineFacts{podman: true, cgroupVersion: "v1", cgroupControllers: all}, false},
		{"rootless v2 delegated", &engineFacts{podman: true, rootless: true, cgroupVersion: "v2", cgroupControllers: all}, false},
		{"rootless v2 without memory", &engineFacts{podman: true, rootless: true, cgroupVersion: "v2", cgroupControllers: []string{"cpu", "pids"}}, true},
		{"rootless v1", &engineFacts{podman: true, rootless: true, cgroupVersion: "v1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &dockerBackend{api: remoteAPI{}}
			d.factsCache.facts = tc.facts
			assert.Equal(t, tc.shared, d.Info().SharedMemoryCgroup)
		})
	}
}

// overlapCounter is an engine API whose creates take a moment and count
// how many ran at once.
type overlapCounter struct {
	dockerAPI
	running, most atomic.Int32
}

func (o *overlapCounter) ContainerCreate(context.Context, *container.Config, *container.HostConfig, *network.NetworkingConfig, *ocispec.Platform, string) (container.CreateResponse, error) {
	n := o.running.Add(1)
	defer o.running.Add(-1)
	for m := o.most.Load(); n > m && !o.most.CompareAndSwap(m, n); m = o.most.Load() {
	}
	time.Sleep(5 * time.Millisecond) // long enough for the others to arrive
	return container.CreateResponse{ID: "made"}, nil
}

// TestKeepIDCreatesOneAtATime: this process's keep-id creates never run at
// once, since Podman's subordinate id lookup is not safe for concurrent
// use (createContainer).
func TestKeepIDCreatesOneAtATime(t *testing.T) {
	api := &overlapCounter{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := createContainer(context.Background(), api, &container.Config{}, &container.HostConfig{UsernsMode: "keep-id:uid=1000,gid=1000"}, "")
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, api.most.Load())
}
