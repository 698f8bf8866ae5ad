package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// removingElsewhere is an engine whose container is being removed by the
// engine itself (AutoRemove): a removal is answered with a conflict until
// the container is gone, then with "not found".
type removingElsewhere struct {
	remoteAPI
	conflicts int
	calls     int
}

func (r *removingElsewhere) ContainerRemove(_ context.Context, id string, _ container.RemoveOptions) error {
	r.calls++
	if r.calls <= r.conflicts {
		return fmt.Errorf("Error response from daemon: removal of container %s is already in progress: %w", id, cerrdefs.ErrConflict)
	}
	return fmt.Errorf("Error response from daemon: No such container: %s: %w", id, cerrdefs.ErrNotFound)
}

// docker is the Docker backend over api, its engine known to be Docker.
func docker(api dockerAPI) *dockerBackend {
	d := &dockerBackend{api: api}
	d.factsCache.facts = &engineFacts{}
	return d
}

// TestRemoveWaitsForARemovalUnderWay: a sandbox whose removal is already
// under way is removed when Remove returns, not merely being removed; an
// engine that never ends that removal costs the caller its context, with
// an error saying so.
func TestRemoveWaitsForARemovalUnderWay(t *testing.T) {
	api := &removingElsewhere{conflicts: 3}
	d := docker(api)
	c := &Client{b: d, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	require.NoError(t, c.removeSandbox(context.Background(), "c1"))
	assert.Equal(t, 4, api.calls, "asked again until the engine answered that the container is gone")

	api = &removingElsewhere{conflicts: 1 << 30}
	d = docker(api)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := d.Remove(ctx, "c2")
	require.Error(t, err)
	assert.True(t, errors.Is(err, errConflict))
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.Contains(t, err.Error(), "still being removed")
}
