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

// lookScript exits 127 when its argument names no program, as the command's
// PATH and working directory resolve it, and 126 otherwise.
const lookScript = `case $1 in */*) p=$1 ;; *) p=$(command -v -- "$1") || exit 127 ;; esac
[ -e "$p" ] || exit 127
exit 126`

// runtimeFraming is what runc puts around the reason an exec did not start.
var runtimeFraming = [2]string{"OCI runtime exec failed: exec failed: unable to start container process: ", ": unknown"}

// startFailed turns res, the result of call whose exec started no process
// in the running sandbox, into that of a command that could not start;
// stderr, when set, receives the reason too.
func (s *Sandbox) startFailed(ctx context.Context, call execCall, stderr io.Writer, res ExecResult) ExecResult {
	reason := strings.TrimSpace(res.Stdout.String())
	reason = strings.TrimSuffix(strings.TrimPrefix(reason, runtimeFraming[0]), runtimeFraming[1])
	res.ExitCode = 126
	probe := execCall{
		Cmd:  []string{"sh", "-c", lookScript, "sh", call.Cmd[0]},
		Env:  append([]string{markerVar + "=internal-" + randomID(4)}, call.Env[1:]...),
		User: call.User, WorkingDir: call.WorkingDir,
		Stdio: stdio{Stdout: io.Discard, Stderr: io.Discard},
	}
	// An image without sh, or a working directory that is not there,
	// starts no probe either: the command cannot be executed (126).
	if st, err := s.c.b.Exec(ctx, s.id, probe); err == nil && !st.NoProcess && st.ExitCode == 127 {
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
