package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bash splits a quoted command line back into the words it was made of.
func TestShellQuoteRoundTrip(t *testing.T) {
	words := []string{"plain", "with space", "it's", `"double"`, "$HOME", "~/x", "a*b", "", "tab\there", "new\nline", "--run_id=x"}
	out, err := exec.Command("bash", "-c", "printf '%s\\0' "+shellQuote(words)).Output()
	require.NoError(t, err)
	assert.Equal(t, words, strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"))
}

// Run by `go run`, the demo's export prints a `go run` command (the binary
// go run built is in a temporary directory or the build cache), and that
// command runs when pasted into bash from the same directory.
func TestGoRunPrintsGoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "./examples/eval", "demo", "--export", dir)
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^run it with:\n  (.+)$`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s", out)
	require.True(t, strings.HasPrefix(m[1], "go run ./examples/eval -d "+filepath.Join(dir, demoDatasetFile)), m[1])

	// --help after the printed flags: the command line parses and runs
	// without starting an evaluation.
	sh := exec.Command("bash", "-c", m[1]+" --help")
	sh.Dir = root
	help, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", help)
	assert.Contains(t, string(help), "eval evaluates SWE-bench predictions")
}
