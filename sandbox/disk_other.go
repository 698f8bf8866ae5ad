//go:build !unix

package sandbox

import "io/fs"

// entryDisk is what one entry of a writable layer takes on disk (see
// dirDisk): its size, at least one block.
func entryDisk(fi fs.FileInfo) int64 { return max(fi.Size(), diskBlock) }
