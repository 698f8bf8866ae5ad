package swebench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

func TestFileTail(t *testing.T) {
	type testCase struct {
		name, content string
		n             int64
		want          string
	}
	for _, tc := range []testCase{
		{name: "short", content: "abc", n: 8, want: "abc"},
		{name: "exact", content: "abcdefgh", n: 8, want: "abcdefgh"},
		{name: "long", content: "0123456789", n: 4, want: "[... 6 bytes before ...]\n6789"},
		{name: "empty", content: "", n: 4, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "test_output.txt")
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
			got, err := fileTail(p, tc.n)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := fileTail(t.TempDir(), 4)
	assert.Error(t, err, "a directory has no tail")
}

// An attempt keeps its command, status and output, standard output first,
// capped head and tail.
func TestPatchAttemptCapsItsOutput(t *testing.T) {
	out := sandbox.NewOutputBuffer(0)
	_, _ = out.Write([]byte("checking patch\n"))
	errs := sandbox.NewOutputBuffer(0)
	_, _ = errs.Write([]byte("error: patch failed\n"))
	a := patchAttempt([]string{"git", "apply", "-v", "p.diff"}, sandbox.ExecResult{ExitCode: 1, Stdout: out.Output(), Stderr: errs.Output()})
	assert.Equal(t, PatchAttempt{Command: "git apply -v p.diff", ExitCode: 1, Output: "checking patch\nerror: patch failed\n"}, a)
	assert.False(t, a.Applied())

	big := sandbox.NewOutputBuffer(1 << 20)
	_, _ = big.Write([]byte(strings.Repeat("x", 3*PatchOutputLimit)))
	a = patchAttempt([]string{"patch"}, sandbox.ExecResult{Stdout: big.Output()})
	assert.True(t, a.Applied())
	assert.Less(t, len(a.Output), PatchOutputLimit+100)
	assert.Contains(t, a.Output, "bytes dropped")
}
