package sandbox_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// TestSandboxEndsWithItsOwner: a program that creates sandboxes and dies
// without removing them (log.Fatal, kill -9) leaves none running 60 s
// later, on the exec agent and without it; Prune then removes what is left.
func TestSandboxEndsWithItsOwner(t *testing.T) {
	c := testenv.Client(t)
	bin := filepath.Join(t.TempDir(), "owner")
	build := exec.Command("go", "build", "-o", bin, "./testdata/owner")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	api := testenv.Docker(t, c)
	type testCase struct {
		name string
		how  string
		kill bool
	}
	for _, tc := range []testCase{
		{name: "log.Fatal", how: "fatal"},
		{name: "kill -9", how: "wait", kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := testenv.Session(t)
			cmd := exec.Command(bin, session, testenv.Image(), tc.how)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			// running counts the session's running containers; -1 when
			// the engine did not answer or the two sandboxes are not there.
			running := func() int {
				list, err := api.ContainerList(context.Background(), container.ListOptions{All: true,
					Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+session))})
				if err != nil || len(list) != 2 {
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
			assert.Equal(t, 2, running(), "both sandboxes run while their owner lives")
			if tc.kill {
				require.NoError(t, cmd.Process.Kill())
			}
			_ = cmd.Wait()
			died := time.Now()
			assert.Eventually(t, func() bool { return running() == 0 }, 60*time.Second, 200*time.Millisecond,
				"no sandbox runs 60 s after its owner died")
			t.Logf("sandboxes stopped %s after their owner died", time.Since(died).Round(10*time.Millisecond))
			pc, err := sandbox.New(sandbox.WithSession(session))
			require.NoError(t, err)
			defer pc.Close()
			_, err = pc.Prune(context.Background(), sandbox.PruneRequest{})
			require.NoError(t, err)
			left := testenv.CountLeftovers(t, pc, session)
			assert.Zero(t, left, "Prune removes what the dead owner left")
		})
	}
}
