//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package fsutil

import "os"

func tryLock(*os.File, bool) (bool, error) { return false, ErrNoLocking }

func unlock(*os.File) {}
