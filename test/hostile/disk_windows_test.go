package hostile_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// freeDisk is the space available to the calling user on dir's volume.
func freeDisk(t *testing.T, dir string) int64 {
	t.Helper()
	p, err := windows.UTF16PtrFromString(dir)
	require.NoError(t, err)
	var avail, total, free uint64
	require.NoError(t, windows.GetDiskFreeSpaceEx(p, &avail, &total, &free))
	return int64(avail)
}
