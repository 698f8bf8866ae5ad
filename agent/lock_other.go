//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package agent

import (
	"fmt"
	"os"
	"runtime"
)

// tryLock fails: the platform has no file lock this package knows.
func tryLock(*os.File) error {
	return fmt.Errorf("no file locking on %s", runtime.GOOS)
}
