package sandbox

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// The engine's exec reports a command that cannot start (a missing program,
// one that is not executable, a missing working directory) as exit status
// 126 with the runtime's message on the command's stdout. Exec reports it
// as a shell and the exec agent do: 127 when the program is not found, else
// 126, with the reason on stderr.

// Podman's exec answers such a command with its own status (127, or 126
// when permission was denied) and the runtime's message on stderr, in
// Podman's framing (podmanStartFailure); Exec reports it the same way.

// lookScript exits 127 when its argument names no program, as the command's
// PATH and working directory resolve it, and 126 otherwise. It prints
// lookedWord first, so that a probe that did not start is told from one
// that exits 127 on an engine whose exec gives no pid-less status (Podman).
const lookScript = `echo looked
case $1 in */*) p=$1 ;; *) p=$(command -v -- "$1") || exit 127 ;; esac
[ -e "$p" ] || exit 127
exit 126`

const lookedWord = "looked\n"

// runtimeFraming is what runc puts around the reason an exec did not start.
var runtimeFraming = [2]string{"OCI runtime exec failed: exec failed: unable to start container process: ", ": unknown"}

// podmanFraming is what Podman puts before the runtime's reason on stderr;
// the reason ends at Podman's own ": OCI ..." (podmanStartFailure).
const podmanFraming = "Error: runc: exec failed: unable to start container process: "

// podmanStartFailure returns the runtime's reason when res, with the exec's
// status code, is Podman's answer to an exec whose process did not start:
// status 126 or 127, no output, and stderr in Podman's framing.
func podmanStartFailure(code int, res ExecResult) (string, bool) {
	if code != 126 && code != 127 || res.Stdout.String() != "" {
		return "", false
	}
	return podmanReason(res.Stderr.String())
}

// podmanReason returns the runtime's reason from stderr in Podman's
// framing.
func podmanReason(stderr string) (string, bool) {
	first, _, _ := strings.Cut(stderr, "\n")
	reason, ok := strings.CutPrefix(first, podmanFraming)
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(reason, ": OCI "); i >= 0 {
		reason = reason[:i]
	}
	return reason, true
}

// startFailed turns res, the result of call whose exec started no process
// in the running sandbox, into that of a command that could not start;
// stderr, when set, receives the reason too.
func (s *Sandbox) startFailed(ctx context.Context, call execCall, stderr io.Writer, res ExecResult) ExecResult {
	reason := strings.TrimSpace(res.Stdout.String())
	reason = strings.TrimSuffix(strings.TrimPrefix(reason, runtimeFraming[0]), runtimeFraming[1])
	if r, ok := podmanReason(res.Stderr.String()); ok && reason == "" {
		reason = r
	}
	res.ExitCode = 126
	var looked strings.Builder
	probe := execCall{
		Cmd:  []string{"sh", "-c", lookScript, "sh", call.Cmd[0]},
		Env:  append([]string{markerVar + "=internal-" + randomID(4)}, call.Env[1:]...),
		User: call.User, WorkingDir: call.WorkingDir,
		Stdio: stdio{Stdout: &looked, Stderr: io.Discard},
	}
	// An image without sh, or a working directory that is not there,
	// starts no probe either: the command cannot be executed (126).
	if st, err := s.c.b.Exec(ctx, s.id, probe); err == nil && !st.NoProcess && looked.String() == lookedWord && st.ExitCode == 127 {
		res.ExitCode = 127
		if strings.Contains(call.Cmd[0], "/") {
			reason = fmt.Sprintf("exec: %q: stat %s: no such file or directory", call.Cmd[0], call.Cmd[0])
		} else {
			reason = fmt.Sprintf("exec: %q: executable file not found in $PATH", call.Cmd[0])
		}
	}
	buf := newCapBuffer(0)
	_, _ = io.WriteString(streamWriter(buf, stderr), reason+"\n")
	res.Stdout, res.Stderr = Output{}, buf.Output()
	res.Signal = 0
	return res
}
