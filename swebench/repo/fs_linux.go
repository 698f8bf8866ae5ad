package repo

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func statTimes(st *syscall.Stat_t) (csec, cnsec, msec, mnsec int64) {
	return int64(st.Ctim.Sec), int64(st.Ctim.Nsec), int64(st.Mtim.Sec), int64(st.Mtim.Nsec)
}

// currentUmask reads the process umask from /proc (Linux 4.7+) without the
// race of setting it to read it. When unknown it returns 0o777, which makes
// callers set every mode explicitly.
func currentUmask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o777
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				break
			}
			return fs.FileMode(m)
		}
	}
	return 0o777
}
