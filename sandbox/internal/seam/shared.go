package seam

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MarkerVar is set, with a fresh value, in the environment of every command
// started in a sandbox. An engine cannot kill one exec, so a command's
// processes are found by it: children inherit it, also when they call setsid
// or double-fork.
const MarkerVar = "SWEBOX_EXEC"

// MainMarker is MarkerVar's value in the environment of a sandbox's main
// process (the container's, a pod's), and so of everything it starts. A
// timed-out command's kill takes a process without any marker that started
// after the command for one of the command's (it replaced its environment);
// the main process's own processes may start late too (the keepalive's
// background subshell, on a sandbox used the moment it started), and this
// marker spares them. An exec sets its own marker, which replaces it.
const MainMarker = "main"

// TeardownTimeout bounds removals and other cleanup, which run on their own
// context because the caller's may be done. It is generous: an engine
// removing a hundred containers at once on a slow storage driver took over
// 30 s to answer one removal.
const TeardownTimeout = 2 * time.Minute

// Keepalive is the main process of a sandbox: it idles until stopped.
// Waiting on a background sleep lets the TERM trap run at once, so Stop does
// not sit out its grace period.
var Keepalive = []string{"/bin/sh", "-c", `trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done`}

// LeasedKeepalive is Keepalive for a sandbox whose owner holds its
// standard input open for as long as it lives (a lease): it also ends when
// that input ends, so a sandbox does not outlive the process that made it.
// The read runs in a background subshell, as Keepalive's sleep does, so
// that the TERM trap runs at once.
var LeasedKeepalive = []string{"/bin/sh", "-c",
	`exec 3<&0; trap 'exit 0' TERM INT; { while read -r _; do :; done; } <&3 & wait $!`}

// OOMScript prints the oom_kill counter of the sandbox's memory cgroup
// (cgroup v1 memory.oom_control or v2 memory.events).
const OOMScript = `for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = oom_kill ] && { echo "$v"; exit 0; }; done < "$f"
done
exit 1`

// ParseUser splits a numeric "uid:gid".
func ParseUser(u string) (uid, gid int, err error) {
	us, gs, ok := strings.Cut(u, ":")
	if !ok {
		return 0, 0, fmt.Errorf("%q must be numeric uid:gid", u)
	}
	uid, err1 := strconv.Atoi(us)
	gid, err2 := strconv.Atoi(gs)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("%q must be numeric uid:gid", u)
	}
	return uid, gid, nil
}

// IsDialError reports whether err is a failure to connect at all.
func IsDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) && errors.As(err, &op)
}
