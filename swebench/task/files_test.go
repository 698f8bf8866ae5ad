package task_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

// TestFilesAndDiffByproducts: ReadFile and WriteFile move bytes as they
// are (relative paths in /testbed, absolute ones anywhere the agent may
// write) and name the file a failure is about; a program that does not
// exist exits 127 with the reason on stderr; the diff leaves out what
// running the tests writes (__pycache__, .pyc, .pytest_cache) and carries
// a binary file in full, which the evaluator applies.
func TestFilesAndDiffByproducts(t *testing.T) {
	d := loadDemo(t)
	tasks := newTasks(t, d, testenv.Client(t))
	ctx := context.Background()
	inst := d.rows[0]
	env, err := tasks.Start(ctx, inst.InstanceID)
	require.NoError(t, err)
	defer env.Close()

	bin := []byte("\x00\x01binary\xff\n")
	require.NoError(t, env.WriteFile(ctx, "fixture.bin", bin))
	got, err := env.ReadFile(ctx, "/testbed/fixture.bin")
	require.NoError(t, err)
	require.Equal(t, bin, got)
	require.NoError(t, env.WriteFile(ctx, "/tmp/note", []byte("x")))
	_, err = env.ReadFile(ctx, "no/such/file")
	require.ErrorContains(t, err, "read no/such/file: No such file or directory")
	err = env.WriteFile(ctx, "/etc/passwd", []byte("x"))
	require.ErrorContains(t, err, "write /etc/passwd: ")

	r, err := env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"no-such-program"}})
	require.NoError(t, err)
	require.Equal(t, 127, r.ExitCode)
	require.Empty(t, r.Stdout.String())
	require.NotEmpty(t, r.Stderr.String())

	gold(t, env, inst)
	r, err = env.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"python3", "-m", "pytest", "-q", "-p", "cacheprovider"}})
	require.NoError(t, err)
	listing := agentShell(t, env, "find . -name __pycache__ -o -name .pytest_cache | sort")
	require.Contains(t, listing, "__pycache__", "the tests wrote byte code")
	require.Contains(t, listing, ".pytest_cache")
	diff, err := env.Diff(ctx)
	require.NoError(t, err)
	require.NotContains(t, diff, "__pycache__")
	require.NotContains(t, diff, ".pytest_cache")
	require.Contains(t, diff, "diff --git a/fixture.bin b/fixture.bin")
	require.Contains(t, diff, "GIT binary patch", "the binary file is in the patch in full")

	sub, err := env.Submit(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, swebench.OutcomeResolved, sub.Result.Outcome, "the evaluator applies the patch, binary file included")
}
