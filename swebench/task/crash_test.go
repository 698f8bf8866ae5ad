package task_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/task"
)

// crashedEnv makes the test binary, run again by
// TestCrashedProgramLeavesNothing, a program that starts a task
// environment and is killed: its value is "<dataset file>\n<repos dir>".
const crashedEnv = "SWEBOX_TEST_CRASHED_TASK_PROGRAM"

func TestMain(m *testing.M) {
	if v := os.Getenv(crashedEnv); v != "" {
		crashedProgram(v)
	}
	os.Exit(m.Run())
}

// crashedProgram starts the first task of the dataset in its own task
// directory, resets it once (so that it keeps a spare), prints "ready
// <dir> <sandbox>" and waits to be killed.
func crashedProgram(v string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crashed program:", err)
		os.Exit(2)
	}
	file, repos, _ := strings.Cut(v, "\n")
	rows, err := dataset.LoadDataset(file)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	cfg := swebench.Config{Dataset: rows, RepoSources: []string{repos}}
	if testenv.UnenforcedLimits() {
		// As the suites' clients, on rootless Podman on a cgroup v1 host.
		c, err := sandbox.New(sandbox.WithUnenforcedLimits(true))
		if err != nil {
			fail(err)
		}
		cfg.Sandboxes = []*sandbox.Client{c}
	}
	tasks, err := task.New(ctx, task.Config{Eval: cfg})
	if err != nil {
		fail(err)
	}
	env, err := tasks.Start(ctx, rows[0].InstanceID)
	if err != nil {
		fail(err)
	}
	if _, err := env.Reset(ctx); err != nil { // from now on with a spare
		fail(err)
	}
	fmt.Println("ready", tasks.Dir(), env.Sandbox().ID())
	select {}
}

// TestCrashedProgramLeavesNothing: a program killed with SIGKILL while
// its task environment runs leaves its task directory (the checkouts
// bind-mounted at /testbed, the spare's too) and its sandboxes; the next
// task.New on the machine removes the directory, and the sandboxes are
// gone within a minute with no Prune.
func TestCrashedProgramLeavesNothing(t *testing.T) {
	d := loadDemo(t)
	c := testenv.Client(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashedEnv+"="+filepath.Join(d.dir, "dataset.jsonl")+"\n"+d.repos)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the program started its environment")
	f := strings.Fields(line)
	require.Len(t, f, 3, line)
	dir, id := f[1], f[2]
	require.DirExists(t, filepath.Join(dir, "work"), "the program's checkouts")
	require.Eventually(t, func() bool {
		ws, _ := filepath.Glob(filepath.Join(dir, "work", "ws-*"))
		return len(ws) == 2
	}, time.Minute, 100*time.Millisecond, "the environment's checkout and its spare's")
	// Killed only once the spare runs too: a container the program was
	// still creating when it died is never started, and the engine does not
	// remove such a one (the next client's sweep or Prune does).
	api := testenv.Docker(t, c)
	require.Eventually(t, func() bool {
		objs, err := c.List(context.Background(), sandbox.ListRequest{All: true, Labels: map[string]string{task.LabelTask: ""}})
		require.NoError(t, err)
		running := 0
		for _, o := range objs {
			if o.Kind != sandbox.KindSandbox {
				continue
			}
			if ci, err := api.ContainerInspect(context.Background(), o.ID); err == nil && ci.State != nil && ci.State.Running {
				running++
			}
		}
		return running == 2
	}, time.Minute, 100*time.Millisecond, "the environment's sandbox and its spare run")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.DirExists(t, dir, "killed, the program removed nothing")

	own, err := task.New(context.Background(), task.Config{Eval: evalConfig(d, c)})
	require.NoError(t, err)
	defer func() { require.NoError(t, own.Close()) }()
	require.NoDirExists(t, dir, "the next task.New removed the dead program's task directory")
	require.DirExists(t, own.Dir(), "and not its own")

	require.Eventually(t, func() bool {
		_, err := api.ContainerInspect(context.Background(), id)
		return cerrdefs.IsNotFound(err)
	}, time.Minute, 250*time.Millisecond, "the dead program's sandbox is removed, not left stopped")
	var left []sandbox.Object
	assert.Eventually(t, func() bool {
		left, err = c.List(context.Background(), sandbox.ListRequest{All: true, Labels: map[string]string{task.LabelTask: ""}})
		require.NoError(t, err)
		return len(left) == 0
	}, time.Minute, 250*time.Millisecond, "no task sandbox (the spare included) nor its volume is left")
	for _, o := range left {
		state := "?"
		if ci, err := api.ContainerInspect(context.Background(), o.ID); err == nil && ci.State != nil {
			state = ci.State.Status
		}
		t.Logf("left: %s %s (%s) %v", o.Kind, o.ID, state, o.Labels)
	}
}
