//go:build !unix

package repo

import "os"

// Without flock, only the in-process lock protects a mirror: processes
// that share a cache directory must not update one repository at once.
func tryLockFile(*os.File, bool) (bool, error) { return true, nil }

func unlockFile(*os.File) {}
