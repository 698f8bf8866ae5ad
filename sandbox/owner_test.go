package sandbox

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOwnerGone: a sandbox's owner label names this process while it runs;
// a process of this machine that ended is gone; an owner of another machine
// (or one that cannot be read) is never taken for gone.
func TestOwnerGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owner labels are read from /proc")
	}
	self := ownerID()
	require.NotEmpty(t, self)
	assert.False(t, ownerGone(self), "this process runs")
	done := exec.Command("true")
	require.NoError(t, done.Run())
	parts := strings.Split(self, ".")
	parts[2] = strconv.Itoa(done.Process.Pid)
	assert.True(t, ownerGone(strings.Join(parts, ".")), "a process that ended is gone")
	other := strings.Split(self, ".")
	other[0] = "ffffffff"
	other[2] = strconv.Itoa(done.Process.Pid)
	assert.False(t, ownerGone(strings.Join(other, ".")), "another machine's process is not gone")
	assert.False(t, ownerGone(""), "no label, no verdict")
	assert.False(t, ownerGone("garbage"))
}
