//go:build unix

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// engineUser is the uid that owns the engine's Unix socket: the user the
// engine runs as (root for a rootful engine, the user of a rootless one), or
// -1 when the engine is not reached over a local Unix socket.
func engineUser(host string) int {
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		return -1
	}
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1
	}
	return int(st.Uid)
}

// pidMax is this machine's /proc/sys/kernel/pid_max, 0 when unknown.
func pidMax() int64 {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
