package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LabelOwner names the process that created a sandbox: its machine's boot,
// its pid namespace, its pid and its start time (Linux), so that a Prune
// with Stopped, and every client at its first sandbox (reapOrphans), can
// tell a sandbox whose owner died (a one-shot Run's command still running,
// say) from a live program's.
const LabelOwner = "swebox.owner"

// ownerID is this process's owner label value; "" where it cannot be told.
var ownerID = sync.OnceValue(func() string { return processID(os.Getpid()) })

// processID is "<boot>.<pid namespace>.<pid>.<start time>" of the process
// pid on this machine, "" when it does not run or cannot be read.
func processID(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || len(boot) < 8 {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return ""
	}
	// f[0] is the state (field 3); the start time is field 22.
	return string(boot[:8]) + "." + ns + "." + strconv.Itoa(pid) + "." + f[19]
}

// ownerGone reports whether owner names a process of this machine (same
// boot and pid namespace) that no longer runs. An owner elsewhere, or one
// that cannot be told, is not gone.
func ownerGone(owner string) bool {
	parts := strings.Split(owner, ".")
	self := strings.Split(ownerID(), ".")
	if len(parts) != 4 || len(self) != 4 || parts[0] != self[0] || parts[1] != self[1] {
		return false
	}
	pid, err := strconv.Atoi(parts[2])
	if err != nil || pid <= 0 {
		return false
	}
	return processID(pid) != owner
}
