package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"io"
	"strconv"
	"strings"
	"time"
)

// markerVar marks every command the package starts in a sandbox, so that a
// timed-out command's processes can be found (seam.MarkerVar).
const markerVar = seam.MarkerVar

// killBudget bounds the in-container kill of a timed-out command; past it the
// whole container is killed instead.
const killBudget = 1500 * time.Millisecond

// killAttempts is how many times a timed-out command's processes are killed
// while its stream stays open, a second apart, before the stream is closed.
const killAttempts = 3

// killScript kills every process of the command whose marker is $1, using
// only /proc and shell builtins, so it needs no free process slot beyond its
// own and stays fast on a loaded machine. A process belongs to the command
// when its environment has the marker, or when it has no marker at all (it
// replaced its environment, or hid it by becoming non-dumpable) and started no
// earlier than the command's oldest marked process. Processes are first
// stopped, pass after pass, so none can fork while the others are killed.
// The script's own ancestors are never the command's: under the exec agent
// its parent is a shim, non-dumpable and possibly started after the command,
// which would otherwise match, and killing it would kill the script. A
// process cannot make itself an ancestor of the script, so the exception
// spares nothing of the command's. Exit status 3 means processes remained,
// 4 that no process carried the marker: the command's exec had not started,
// or it had ended with all its processes.
//
// read drops the NUL separators of /proc/PID/environ, so the variables run
// together; the marker's value has a fixed length, so a substring match is
// exact.
const killScript = `m="` + markerVar + `=$1"; self=$$
stat() { read -r st < "$1/stat" 2>/dev/null || return 1; st=${st##*) }; set -- $st; state=$1; ppid=$2; shift 19; t=$1; }
envof() { e=; while IFS= read -r l || [ -n "$l" ]; do e="$e$l"; done < "$1/environ" 2>/dev/null; }
min=
for d in /proc/[0-9]*; do
  stat "$d" || continue
  envof "$d"
  case "$e" in *"$m"*) if [ -z "$min" ] || [ "$t" -lt "$min" ]; then min=$t; fi;; esac
done
[ -n "$min" ] || exit 4
anc=" "; a=$self
while stat "/proc/$a" && [ "$ppid" -gt 1 ]; do anc="$anc$ppid "; a=$ppid; done
scan() {
  found=0; live=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case "$p" in 1|"$self") continue;; esac
    case "$anc" in *" $p "*) continue;; esac
    stat "$d" || continue
    case "$state" in Z|X|x) continue;; esac
    [ "$ppid" = "$self" ] && continue
    envof "$d"
    case "$e" in
      *"$m"*) ;;
      *` + markerVar + `=*) continue;;
      *) [ "$t" -ge "$min" ] || continue;;
    esac
    found=$((found+1)); [ "$state" = T ] || live=$((live+1))
    kill -"$1" "$p" 2>/dev/null
  done
}
i=0; while scan STOP; [ "$live" -gt 0 ] && [ $i -lt 50 ]; do i=$((i+1)); done
i=0; while scan KILL; [ "$found" -gt 0 ]; do
  i=$((i+1)); [ $i -ge 200 ] && exit 3
done
exit 0`

// killCommand kills every process of the command with the given marker, and
// reports whether it saw one: then the command's exec had started, and none
// of its processes can start after the kill. When the kill cannot be shown
// to have worked, it kills the container and marks the sandbox unusable, so
// no process of the command survives either way.
func (s *Sandbox) killCommand(marker, user string) (saw bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), killBudget)
	defer cancel()
	res, err := s.runInternal(ctx, []string{"/bin/sh", "-c", killScript, "swebox-kill", marker}, user, nil, nil)
	if err == nil && (res.ExitCode == 0 || res.ExitCode == 4) {
		return res.ExitCode == 0, nil
	}
	cause := err
	if cause == nil {
		cause = fmt.Errorf("kill script exited %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr.String()))
	}
	s.c.log.Warn("killing container after a timed-out command", "id", shortID(s.id), "cause", cause)
	s.mu.Lock()
	s.unusable = fmt.Errorf("%w: the processes of a timed-out command could not be killed one by one (%v), so the container was killed", ErrUnusable, cause)
	s.mu.Unlock()
	kctx, kcancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer kcancel()
	if err := s.c.b.Kill(kctx, s.id, "KILL"); err != nil && !isNotRunning(err) {
		return true, s.c.engineErr("kill sandbox", err)
	}
	return true, nil
}

// runInternal runs a command of the package's own (not checked by the
// policy, never timed out into killCommand). stdin is optional; stdout, when
// set, receives the output besides the capped copy in the result.
func (s *Sandbox) runInternal(ctx context.Context, cmd []string, user string, stdin io.Reader, stdout io.Writer) (ExecResult, error) {
	if user == "" {
		user = s.spec.User
	}
	outBuf, errBuf := newCapBuffer(64<<10), newCapBuffer(64<<10)
	st, err := s.c.b.Exec(ctx, s.id, execCall{
		Cmd: cmd, User: user, Env: []string{markerVar + "=internal-" + randomID(4)},
		Stdio: stdio{Stdin: stdin, Stdout: streamWriter(outBuf, stdout), Stderr: errBuf},
	})
	res := ExecResult{Stdout: outBuf.Output(), Stderr: errBuf.Output(), ExitCode: st.ExitCode}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ExecResult{}, fmt.Errorf("run %s: %w", cmd[0], ctxErr)
	}
	icx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	if err != nil {
		return ExecResult{}, s.execErr(icx, err, cmd[0], res.Stdout)
	}
	if st.NoProcess {
		if running, why := s.stopped(icx); !running {
			return ExecResult{}, notStarted(cmd[0], why, res.Stdout)
		}
	}
	return res, nil
}

// oomScript prints the sandbox's OOM kill counter (seam.OOMScript).
const oomScript = seam.OOMScript

// OOMKills returns how many processes the kernel's OOM killer has ended in
// the sandbox since it started (the memory cgroup's oom_kill counter). It
// sees what ExecResult.OOMKilled cannot: a child of a command killed while
// the command itself lived on. Where the sandbox has no memory cgroup of
// its own (rootless Podman without the memory controller, as on a cgroup v1
// host) it returns an error, and OOMKilled stays false: the counter the
// sandbox sees there is shared with other processes.
func (s *Sandbox) OOMKills(ctx context.Context) (int64, error) {
	if info(s.c.b).SharedMemoryCgroup {
		return 0, errors.New("read OOM kill count: the sandbox has no memory cgroup of its own (rootless Podman without the memory controller); the one it sees counts the OOM kills of other processes")
	}
	res, err := s.runInternal(ctx, []string{"/bin/sh", "-c", oomScript}, "", nil, nil)
	if err != nil {
		return 0, err
	}
	if res.ExitCode != 0 {
		return 0, fmt.Errorf("read OOM kill count: no memory cgroup counter visible in the container")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(res.Stdout.String()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read OOM kill count: %w", err)
	}
	return n, nil
}

// oomKilledSince reports whether the container's OOM kill count grew since
// the last look. A fresh container's count is 0.
func (s *Sandbox) oomKilledSince(ctx context.Context) bool {
	n, err := s.OOMKills(ctx)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	grew := n > s.oomSeen
	s.oomSeen = n
	return grew
}

// isNotRunning: an engine answers a kill of a stopped or removed sandbox, and
// a removal of one being removed, with a conflict or "not found".
func isNotRunning(err error) bool { return errors.Is(err, errConflict) || errors.Is(err, errNotFound) }
