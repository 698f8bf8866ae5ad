package main

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// TestServersOfOneNameLeaveEachOtherAlone: every stdio client starts its own
// server, all with the default --name. A second server's start-up cleanup
// leaves the first one's live session alone (its state survives); a server
// killed with SIGKILL leaves containers that stop at once, and the next
// server of the name removes those, and only those.
func TestServersOfOneNameLeaveEachOtherAlone(t *testing.T) {
	c := engine(t)
	args := baseArgs(c, "--pool", "0")
	first := startStdio(t, args, nil)
	info, _ := callOK[sessionInfoOut](t, first.cs, "session_create", map[string]any{})
	_, _ = callOK[runOutput](t, first.cs, "session_exec", map[string]any{"session": info.Session, "command": "echo kept > state.txt"})

	second := startStdio(t, args, nil)
	_, _ = callOK[sessionInfoOut](t, second.cs, "session_create", map[string]any{})
	out, _ := callOK[runOutput](t, first.cs, "session_exec", map[string]any{"session": info.Session, "command": "cat state.txt"})
	assert.Equal(t, "kept\n", out.Stdout, "the first server's session kept its state when a second server of the same name started")
	assert.Equal(t, 2, leftovers(t, c), "one container per live session")

	// The second server dies without cleaning up (the SDK's transport
	// reaps the process).
	require.NoError(t, second.cmd.Process.Kill())
	assert.Eventually(t, func() bool { return running(t, c) == 1 }, 60*time.Second, 200*time.Millisecond,
		"the killed server's container stops")

	third := startStdio(t, args, nil)
	require.False(t, callTool(t, third.cs, "session_list", map[string]any{}).IsError)
	assert.Equal(t, 1, leftovers(t, c), "the third server removed the killed one's container and kept the live one's")
	out, _ = callOK[runOutput](t, first.cs, "session_exec", map[string]any{"session": info.Session, "command": "cat state.txt"})
	assert.Equal(t, "kept\n", out.Stdout)
}

// running counts the containers labelled with c's session that run.
func running(t *testing.T, c *sandbox.Client) int {
	list, err := testenv.Docker(t, c).ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+c.Session()))})
	if err != nil {
		return -1
	}
	n := 0
	for _, ct := range list {
		if ct.State == "running" {
			n++
		}
	}
	return n
}
