//go:build darwin || freebsd || netbsd || openbsd

package repo

import (
	"io/fs"
	"syscall"
)

func statTimes(st *syscall.Stat_t) (csec, cnsec, msec, mnsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec), int64(st.Mtimespec.Sec), int64(st.Mtimespec.Nsec)
}

// currentUmask is not readable without setting it: callers set every mode
// explicitly.
func currentUmask() fs.FileMode { return 0o777 }
