//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// entryDisk is what one entry of a writable layer takes on disk (see
// dirDisk).
func entryDisk(fi fs.FileInfo) int64 {
	n := max(fi.Size(), diskBlock)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		n = max(n, int64(st.Blocks)*512)
	}
	return n
}
