//go:build unix

package hostile_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// freeDisk is the space available to an unprivileged user on dir's file
// system.
func freeDisk(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	return int64(st.Bavail) * int64(st.Bsize)
}
