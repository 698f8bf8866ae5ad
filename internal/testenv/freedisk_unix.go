//go:build unix

package testenv

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FreeDisk is the space available to an unprivileged user on dir's file
// system; the test fails when it cannot be read.
func FreeDisk(t testing.TB, dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Errorf("statfs %s: %v", dir, err)
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// WatchFreeDisk samples the free space of dir's file system every 20 ms
// until the returned function is called, which returns the largest drop
// below the free space at the start.
func WatchFreeDisk(t testing.TB, dir string) (worstDrop func() int64) {
	before := FreeDisk(t, dir)
	var worst atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			worst.Store(max(worst.Load(), before-FreeDisk(t, dir)))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() int64 {
		once.Do(func() { close(stop); wg.Wait() })
		return worst.Load()
	}
}

// EngineDisk is a directory on the file system where the local engine
// keeps containers' layers: /var/lib/docker when it exists, else the
// temporary directory.
func EngineDisk() string {
	if _, err := os.Stat("/var/lib/docker"); err == nil {
		return "/var/lib/docker"
	}
	return os.TempDir()
}
