package sandbox

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// output is an Output holding s.
func output(s string) Output {
	b := newCapBuffer(0)
	_, _ = io.WriteString(b, s)
	return b.Output()
}

// TestPodmanStartFailure: Podman's answer to an exec whose process did not
// start is told from a command's own output, and the runtime's reason is
// taken out of Podman's framing.
func TestPodmanStartFailure(t *testing.T) {
	const notFound = "Error: runc: exec failed: unable to start container process: exec: \"x\": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found\n" +
		"Error: read unixpacket @->/proc/self/fd/14/attach: read: connection reset by peer\n"
	for _, tc := range []struct {
		name           string
		code           int
		stdout, stderr string
		want           string
		ok             bool
	}{
		{"not found", 127, "", notFound, `exec: "x": executable file not found in $PATH`, true},
		{"permission denied", 126, "", "Error: runc: exec failed: unable to start container process: exec: \"/etc/passwd\": permission denied: OCI permission denied\n",
			`exec: "/etc/passwd": permission denied`, true},
		{"a command's own status", 1, "", notFound, "", false},
		{"a command that printed", 127, "out\n", notFound, "", false},
		{"a shell's words", 127, "", "sh: 1: x: not found\n", "", false},
		{"framing on a later line", 127, "", "first\n" + notFound, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, ok := podmanStartFailure(tc.code, ExecResult{Stdout: output(tc.stdout), Stderr: output(tc.stderr)})
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, reason)
		})
	}
}
