//go:build unix

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// orphanOwnerEnv makes the test binary, run again by
// TestNextClientRemovesOrphans, the owner that dies: its value is the
// session.
const orphanOwnerEnv = "SWEBOX_TEST_ORPHAN_OWNER"

func TestMain(m *testing.M) {
	if session := os.Getenv(orphanOwnerEnv); session != "" {
		orphanOwner(session)
	}
	os.Exit(m.Run())
}

// startHangs is an engine on which a container's start never returns: its
// caller prints "ready" and waits there to be killed.
type startHangs struct{ sandbox.DockerAPI }

func (startHangs) ContainerStart(ctx context.Context, _ string, _ container.StartOptions) error {
	fmt.Println("ready")
	<-ctx.Done()
	return ctx.Err()
}

// orphanOwner creates a sandbox with a volume and the exec agent's
// directory, and is killed while its start is under way: the engine keeps a
// container that never started, which it does not remove by itself.
func orphanOwner(session string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "orphan owner:", err)
		os.Exit(2)
	}
	limits := sandbox.WithUnenforcedLimits(testenv.UnenforcedLimits())
	c, err := sandbox.New(sandbox.WithSession(session), limits)
	if err != nil {
		fail(err)
	}
	oc, err := sandbox.New(sandbox.WithSession(session), sandbox.WithDockerAPI(startHangs{sandbox.EngineOf(c)}), limits)
	if err != nil {
		fail(err)
	}
	_, err = oc.Create(context.Background(), sandbox.Spec{Image: testenv.Image(), Mounts: []sandbox.Mount{{Type: "volume", Target: "/data"}}})
	fail(fmt.Errorf("create returned: %v", err))
}

// TestNextClientRemovesOrphans: what a program killed with SIGKILL leaves
// that the engine keeps (here a sandbox created but never started, its
// volume, and its exec agent directory on the host) the next client on the
// machine removes, once it creates a sandbox, with no Prune.
func TestNextClientRemovesOrphans(t *testing.T) {
	c := testenv.Client(t)
	api := testenv.Docker(t, c)
	session := testenv.Session(t)
	t.Cleanup(func() { pruneSession(t, session) })

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), orphanOwnerEnv+"="+session)
	startOwnerCmd(t, cmd)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	list, err := api.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+session))})
	require.NoError(t, err)
	require.Len(t, list, 1, "the dead owner's sandbox is still there")
	assert.Equal(t, "created", list[0].State)
	ct, _, vol := sessionObjects(t, api, session)
	require.Equal(t, []int{1, 1}, []int{ct, vol}, "the dead owner's sandbox and volume are still there")
	name := list[0].Labels["swebox.agentdir"]
	require.NotEmpty(t, name, "the sandbox has an exec agent directory")
	dir := filepath.Join(sandbox.AgentBase(), name)
	require.DirExists(t, dir)

	next, err := sandbox.New(sandbox.WithUnenforcedLimits(testenv.UnenforcedLimits()))
	require.NoError(t, err)
	sb, err := next.Create(context.Background(), sandbox.Spec{Image: testenv.Image()})
	require.NoError(t, err)
	require.NoError(t, sb.Close())
	require.NoError(t, next.Close(), "Close waits for the sweep")
	ct, _, vol = sessionObjects(t, api, session)
	assert.Equal(t, []int{0, 0}, []int{ct, vol}, "the next client removed the dead owner's sandbox and volume")
	assert.NoDirExists(t, dir, "and its exec agent directory")
}
