package sandbox_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// A session's prune removes the socket directories its crashed sandboxes
// left (the container gone, the directory old), also for session names
// longer than the prefix a directory's name keeps, and leaves those of
// another session whose name begins the same.
func TestPruneFindsAgentDirectoriesOfLongSessionNames(t *testing.T) {
	ctx := context.Background()
	base := testenv.Session(t)
	orphan := func(session string) string {
		c := newClient(t, sandbox.WithSession(session))
		sb := agentSandbox(t, c)
		dir := agentDir(t, c, sb)
		// A crash: the container goes, the directory stays and ages.
		require.NoError(t, sandbox.EngineOf(c).ContainerRemove(ctx, sb.ID(), container.RemoveOptions{Force: true}))
		old := time.Now().Add(-time.Hour)
		require.NoError(t, os.Chtimes(dir, old, old))
		return dir
	}
	mine := orphan(base + "-session-a")
	other := orphan(base + "-session-b")
	require.Greater(t, len(base), 16)

	c := newClient(t, sandbox.WithSession(base+"-session-a"))
	_, err := c.Prune(ctx, sandbox.PruneRequest{})
	require.NoError(t, err)
	_, err = os.Stat(mine)
	assert.ErrorIs(t, err, os.ErrNotExist, "the session's own directory is pruned")
	_, err = os.Stat(other)
	assert.NoError(t, err, "another session's directory stays")
	require.NoError(t, os.RemoveAll(other))
}
