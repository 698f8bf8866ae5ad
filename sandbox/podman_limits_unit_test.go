package sandbox

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteAPI is an engine API that only names its host: a TCP one, so that
// no local socket's owner is looked up.
type remoteAPI struct{ dockerAPI }

func (remoteAPI) DaemonHost() string { return "tcp://engine.example:2375" }

// TestPodmanCgroupLimits: on rootless Podman, the cgroup limits of a
// sandbox are kept when the engine's user has the controllers they live in
// (cgroup v2 with delegation), and refused by name, or dropped with the
// opt-in, when it lacks them. Rootful Podman and Docker keep them all. The
// engine's facts are given here; TestLimitsEnforcedOrRefused reads the
// sandbox's own cgroup on real engines.
func TestPodmanCgroupLimits(t *testing.T) {
	pids := int64(64)
	limited := func() *container.HostConfig {
		return &container.HostConfig{Resources: container.Resources{
			Memory: 256 << 20, MemorySwap: 256 << 20, NanoCPUs: 1e9, PidsLimit: &pids,
		}}
	}
	all := []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids"}
	for _, tc := range []struct {
		name       string
		facts      engineFacts
		unenforced bool
		refused    []string // the Limits fields named by the refusal
		reason     string   // a part of its Reason
		dropped    bool     // the limits are gone from the request
	}{
		{name: "docker", facts: engineFacts{}},
		{name: "rootful podman v1", facts: engineFacts{podman: true, cgroupVersion: "v1", cgroupControllers: all}},
		{name: "rootless v2 delegated", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v2", cgroupControllers: all}},
		{name: "rootless v2 without cpu", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v2", cgroupControllers: []string{"memory", "pids"}},
			refused: []string{"NanoCPUs"}, reason: "controllers [memory pids]"},
		{name: "rootless v2 none", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v2"},
			refused: []string{"Memory", "NanoCPUs", "PidsLimit"}, reason: "rootless Podman with cgroup v2"},
		{name: "rootless v1", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v1"},
			refused: []string{"Memory", "NanoCPUs", "PidsLimit"}, reason: "cgroup v1 host"},
		{name: "rootless v1 opted in", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v1"},
			unenforced: true, dropped: true},
		{name: "rootless v2 without pids opted in", facts: engineFacts{podman: true, rootless: true, cgroupVersion: "v2", cgroupControllers: []string{"cpu", "memory"}},
			unenforced: true, dropped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			facts := tc.facts
			d := &dockerBackend{api: remoteAPI{}, unenforcedLimits: tc.unenforced, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			d.factsCache.facts = &facts
			hc := limited()
			_, err := d.adaptPodman(context.Background(), Spec{User: "1000:1000"}, &container.Config{Cmd: []string{"true"}}, hc)
			if tc.refused != nil {
				var ue *UnenforcedLimitsError
				require.ErrorAs(t, err, &ue)
				assert.True(t, errors.Is(err, ErrLimitsNotEnforced))
				assert.Equal(t, tc.refused, ue.Limits)
				assert.Contains(t, ue.Reason, tc.reason)
				assert.Equal(t, "tcp://engine.example:2375", ue.Host)
				return
			}
			require.NoError(t, err)
			r := hc.Resources
			if tc.dropped {
				assert.Zero(t, r.Memory)
				assert.Zero(t, r.MemorySwap)
				assert.Zero(t, r.NanoCPUs)
				assert.Nil(t, r.PidsLimit)
				return
			}
			assert.Equal(t, int64(256<<20), r.Memory)
			assert.Equal(t, int64(1e9), r.NanoCPUs)
			require.NotNil(t, r.PidsLimit)
			assert.Equal(t, pids, *r.PidsLimit)
		})
	}
}
