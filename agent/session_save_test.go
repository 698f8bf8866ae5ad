//go:build linux

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const saveCutEnv = "SWEBOX_AGENT_SAVE_CUT_STATE"

// TestSessionSaveCutShort saves a persistent session's record, then saves a
// larger one in a process whose files may not grow past 64 KiB (as on a
// full disk), so the write stops part way. The record a rerun reads must be
// the first one, whole: a record written in place would be cut.
func TestSessionSaveCutShort(t *testing.T) {
	if state := os.Getenv(saveCutEnv); state != "" {
		saveCutShort(state)
		return
	}
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSessionSaveCutShort$")
	cmd.Env = append(os.Environ(), saveCutEnv+"="+state)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the second save cannot succeed: %s", out)
	require.Contains(t, string(out), "first save done", "%s", out)
	require.Contains(t, string(out), "file too large", "the second save was cut by the limit: %s", out)

	dir := filepath.Join(state, "sessions", "kept")
	b, err := os.ReadFile(filepath.Join(dir, sessionMetaFile))
	require.NoError(t, err)
	var meta sessionMeta
	require.NoError(t, json.Unmarshal(b, &meta), "the record is whole: %.200q", b)
	assert.Equal(t, "small", meta.Options.Env["PAD"], "the record is the first one")

	// A temporary file as a crash in the middle of a save leaves it.
	stale := filepath.Join(dir, "."+sessionMetaFile+".tmp-123")
	require.NoError(t, os.WriteFile(stale, []byte(`{"name": "ke`), 0o600))

	// The rerun: a manager on the same state directory resumes the session.
	m, err := New(nil, WithStateDir(state), WithReapInterval(-1))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	s, err := m.Get(context.Background(), "kept")
	require.NoError(t, err)
	assert.Equal(t, "small", s.opts.Env["PAD"])
	assert.NoFileExists(t, stale, "the rerun removes what a cut save left")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{sessionMetaFile, "workspace"}, names)
}

// saveCutShort is the child of TestSessionSaveCutShort.
func saveCutShort(state string) {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	m, err := New(nil, WithStateDir(state), WithReapInterval(-1))
	if err != nil {
		fail(err)
	}
	s := &Session{m: m, name: "kept", dir: filepath.Join(state, "sessions", "kept"), created: time.Now(),
		opts: SessionOptions{SandboxOptions: SandboxOptions{Env: map[string]string{"PAD": "small"}}, Persistent: true}}
	s.ws = filepath.Join(s.dir, "workspace")
	if err := os.MkdirAll(s.ws, 0o755); err != nil {
		fail(err)
	}
	if err := s.saveLocked(); err != nil {
		fail(err)
	}
	fmt.Println("first save done")
	// From here on no file may grow past 64 KiB; the next record is 1 MiB.
	// Go ignores SIGXFSZ, so the write returns EFBIG part way.
	lim := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fail(err)
	}
	s.opts.Env["PAD"] = strings.Repeat("x", 1<<20)
	// The process ends without closing the manager, as a crash would.
	fail(s.saveLocked())
}
