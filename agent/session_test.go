package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
)

func TestSessionLifecycle(t *testing.T) {
	m, c := newManager(t)
	ctx := context.Background()
	s := createT(t, m, "work-1", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"LEVEL": "session"}}})

	_, err := m.Create(ctx, "work-1", agent.SessionOptions{})
	require.ErrorIs(t, err, agent.ErrSessionExists)
	_, err = m.Create(ctx, "../evil", agent.SessionOptions{})
	require.ErrorIs(t, err, agent.ErrInvalidOption)

	// State on disk carries over from one call to the next; processes do not.
	first := sessionPythonT(t, s, "import os\nos.makedirs('output', exist_ok=True)\nopen('notes.txt', 'w').write('kept')\nopen('output/a.txt', 'w').write('a')\nprint(os.environ['LEVEL'])", agent.ExecOptions{})
	require.True(t, first.OK(), first.Stderr.String())
	assert.Equal(t, "session\n", first.Stdout.String())
	require.Len(t, first.Artifacts, 1)
	second := sessionPythonT(t, s, "import os\nprint(open('notes.txt').read(), os.environ['LEVEL'])\nopen('output/b.txt', 'w').write('b')", agent.ExecOptions{Env: map[string]string{"LEVEL": "call"}})
	require.True(t, second.OK(), second.Stderr.String())
	assert.Equal(t, "kept call\n", second.Stdout.String())
	require.Len(t, second.Artifacts, 1, "only what this call wrote comes back")
	assert.Equal(t, "b.txt", second.Artifacts[0].Path)

	got, err := m.Get(ctx, "work-1")
	require.NoError(t, err)
	assert.Same(t, s, got)
	opened, err := m.Open(ctx, "work-1", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Image: "ignored"}})
	require.NoError(t, err)
	assert.Same(t, s, opened)

	list, err := m.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "work-1", list[0].Name)
	assert.Equal(t, 2, list[0].Runs)
	assert.NotEmpty(t, list[0].Container)
	assert.Len(t, sessionContainers(t, c), 1, "one container serves every call")

	require.NoError(t, m.Remove(ctx, "work-1"))
	_, err = m.Get(ctx, "work-1")
	require.ErrorIs(t, err, agent.ErrSessionNotFound)
	_, err = s.RunPython(ctx, "print(1)", agent.ExecOptions{})
	require.ErrorIs(t, err, agent.ErrClosed)
	assert.NoDirExists(t, s.Workspace())
	assert.Empty(t, sessionContainers(t, c))
	require.NoError(t, s.Close(), "Close twice")
}

func TestSessionExecAndShell(t *testing.T) {
	m, _ := newManager(t)
	s := createT(t, m, "tools", agent.SessionOptions{})
	ctx := context.Background()
	res, err := s.Exec(ctx, []string{"sh", "-c", "echo \"$0 $1\"", "a b", "c"}, agent.ExecOptions{})
	require.NoError(t, err)
	assert.Equal(t, "a b c\n", res.Stdout.String())
	res, err = s.RunShell(ctx, "echo $1 > out.txt; cat out.txt", agent.ExecOptions{Args: []string{"x"}})
	require.NoError(t, err)
	assert.Equal(t, "x\n", res.Stdout.String())
	data, err := os.ReadFile(filepath.Join(s.Workspace(), "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(data), "the workspace is the host directory")
	_, err = s.Exec(ctx, nil, agent.ExecOptions{})
	require.ErrorIs(t, err, agent.ErrInvalidOption)
}

func TestSessionConcurrentCalls(t *testing.T) {
	m, _ := newManager(t)
	s := createT(t, m, "busy", agent.SessionOptions{})
	var wg sync.WaitGroup
	results := make([]agent.Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.RunPython(context.Background(), "import sys; print(sys.argv[1])", agent.ExecOptions{Args: []string{string(rune('a' + i))}})
		}()
	}
	wg.Wait()
	for i := range results {
		require.NoError(t, errs[i])
		assert.Equal(t, string(rune('a'+i))+"\n", results[i].Stdout.String())
	}
}

func TestSessionIdleReaping(t *testing.T) {
	m, c := newManager(t, agent.WithReapInterval(-1))
	ctx := context.Background()
	idle := createT(t, m, "idle", agent.SessionOptions{IdleTimeout: time.Nanosecond})
	keep := createT(t, m, "keep", agent.SessionOptions{IdleTimeout: -1})
	persistent := createT(t, m, "persistent", agent.SessionOptions{IdleTimeout: time.Nanosecond, Persistent: true})
	res := sessionPythonT(t, persistent, "open('state.txt', 'w').write('still here')", agent.ExecOptions{})
	require.True(t, res.OK(), res.Stderr.String())

	// A session with a call running is never reaped.
	started := make(chan struct{})
	done := make(chan agent.Result)
	go func() {
		r, err := idle.RunShell(ctx, "sleep 3", agent.ExecOptions{})
		assert.NoError(t, err)
		done <- r
	}()
	go func() {
		for idle.Info().Active == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		close(started)
	}()
	<-started
	n, err := m.Reap(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the persistent session is suspended")
	assert.True(t, (<-done).OK())

	n, err = m.Reap(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "now the idle one goes")
	_, err = m.Get(ctx, "idle")
	require.ErrorIs(t, err, agent.ErrSessionNotFound)
	_, err = m.Get(ctx, "keep")
	require.NoError(t, err)
	assert.NotEmpty(t, keep.Info().Container)

	// The persistent session lost its container, not its workspace, and
	// comes back on the next call.
	assert.Empty(t, persistent.Info().Container)
	assert.Len(t, sessionContainers(t, c), 1)
	res = sessionPythonT(t, persistent, "print(open('state.txt').read())", agent.ExecOptions{})
	assert.Equal(t, "still here\n", res.Stdout.String())
	assert.NotEmpty(t, persistent.Info().Container)
}

func TestSessionBackgroundReaper(t *testing.T) {
	m, _ := newManager(t, agent.WithReapInterval(20*time.Millisecond))
	createT(t, m, "short", agent.SessionOptions{IdleTimeout: time.Nanosecond})
	require.Eventually(t, func() bool {
		_, err := m.Get(context.Background(), "short")
		return err != nil
	}, 30*time.Second, 50*time.Millisecond)
}

func TestPersistentSessionAcrossManagers(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	state := t.TempDir()
	m1, err := agent.New(c, agent.WithImage(testImage()), agent.WithStateDir(state))
	require.NoError(t, err)
	_, err = agent.New(c, agent.WithStateDir(state))
	require.ErrorIs(t, err, agent.ErrStateDirBusy)
	s, err := m1.Create(ctx, "kept", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Env: map[string]string{"WHO": "kept"}}, Persistent: true})
	require.NoError(t, err)
	res := sessionPythonT(t, s, "open('data.txt', 'w').write('42')", agent.ExecOptions{})
	require.True(t, res.OK(), res.Stderr.String())
	require.NoError(t, m1.Close())
	assert.Empty(t, sessionContainers(t, c), "closing suspends persistent sessions")

	m2, err := agent.New(c, agent.WithImage(testImage()), agent.WithStateDir(state))
	require.NoError(t, err)
	defer func() { require.NoError(t, m2.Close()) }()
	list, err := m2.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "kept", list[0].Name)
	assert.Empty(t, list[0].Container)
	s2, err := m2.Get(ctx, "kept")
	require.NoError(t, err)
	res = sessionPythonT(t, s2, "import os; print(open('data.txt').read(), os.environ['WHO'])", agent.ExecOptions{})
	assert.Equal(t, "42 kept\n", res.Stdout.String())
	_, err = m2.Create(ctx, "kept", agent.SessionOptions{})
	require.ErrorIs(t, err, agent.ErrSessionExists)
	require.NoError(t, m2.Remove(ctx, "kept"))
	list, err = m2.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestSessionSurvivesStoppedContainer(t *testing.T) {
	m, _ := newManager(t)
	s := createT(t, m, "fragile", agent.SessionOptions{})
	ctx := context.Background()
	first := s.Info().Container
	// The program stops its own sandbox by signalling init.
	_, err := s.RunShell(ctx, "kill -TERM 1; sleep 5", agent.ExecOptions{Timeout: 20 * time.Second})
	_ = err // the command may or may not report before the container goes
	res := sessionPythonT(t, s, "print('back')", agent.ExecOptions{})
	assert.Equal(t, "back\n", res.Stdout.String())
	assert.NotEqual(t, first, s.Info().Container)
}

// TestSessionPlantedSymlinks: links the program leaves where the library
// writes on the host (.swebox, .venv) are replaced, never followed.
func TestSessionPlantedSymlinks(t *testing.T) {
	m, c := newManager(t)
	wheels := buildWheel(t, c, "", "linked", "1.0")
	s := createT(t, m, "links", agent.SessionOptions{})
	host := t.TempDir()
	code := "import os, shutil, sys\nshutil.rmtree('.swebox')\nshutil.rmtree('mounts')\nfor name in ('.swebox', '.venv', 'mounts'):\n    os.symlink(sys.argv[1], name)"
	res := sessionPythonT(t, s, code, agent.ExecOptions{Args: []string{host}})
	require.True(t, res.OK(), res.Stderr.String())
	res = sessionPythonT(t, s, "print(open('mounts/in.txt').read())", agent.ExecOptions{Files: []agent.File{{Name: "in.txt", Data: []byte("next")}}})
	assert.Equal(t, "next\n", res.Stdout.String(), res.Stderr.String())
	inst, err := s.Install(context.Background(), agent.Requirements{Packages: []string{"linked"}, WheelDir: wheels})
	require.NoError(t, err)
	require.True(t, inst.OK())
	res = sessionPythonT(t, s, "import linked; print(linked.VALUE)", agent.ExecOptions{})
	assert.Equal(t, "linked-1.0\n", res.Stdout.String(), res.Stderr.String())
	entries, err := os.ReadDir(host)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written through the links")
}
