//go:build unix

package agent

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number, which tells a replaced file from one
// rewritten in place with the same size and time.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
