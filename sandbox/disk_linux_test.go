package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// writableRoot is a root sandbox with a writable root filesystem and the
// rest of the hardening.
func writableRoot(disk int64) sandbox.Spec {
	return sandbox.Spec{
		Image: testImage(), Policy: sandbox.AllowAll(), User: "0:0", Relax: sandbox.Relax{Root: true, WritableRootFS: true},
		Limits: sandbox.Limits{Disk: disk, FileSize: 32 << 20},
	}
}

// TestWritableRootIsCopyOnWrite: what a sandbox writes over the image's
// files it sees and no other sandbox of the image does; the hardening
// besides the root's writability stays (no capabilities, no network,
// no-new-privileges).
func TestWritableRootIsCopyOnWrite(t *testing.T) {
	forEachTransport(t, func(t *testing.T, c *sandbox.Client) {
		a := createT(t, c, writableRoot(0))
		b := createT(t, c, writableRoot(0))
		res := shT(t, a, "echo changed > /etc/hostname-probe && echo swebox-probe >> /etc/os-release && cat /etc/hostname-probe")
		require.Equal(t, 0, res.ExitCode, res.Stderr.String())
		assert.Equal(t, "changed\n", res.Stdout.String())
		res = shT(t, b, "test -e /etc/hostname-probe && echo seen; grep -c swebox-probe /etc/os-release")
		assert.Equal(t, "0\n", res.Stdout.String(), "another sandbox of the image sees neither the new file nor the change to an image file")

		res = shT(t, a, "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; cat /proc/net/dev | tail -n +3 | cut -d: -f1")
		require.Equal(t, 0, res.ExitCode, res.Stderr.String())
		caps := parseCaps(res.Stdout.String())
		assert.Equal(t, "0000000000000000", caps["CapEff"])
		assert.Equal(t, "0000000000000000", caps["CapBnd"])
		assert.Equal(t, "1", caps["NoNewPrivs"])
		assert.Contains(t, res.Stdout.String(), "lo")
		assert.NotContains(t, res.Stdout.String(), "eth0", "no network interface but loopback")
	})
}

// TestWritableRootDiskLimit: a command that writes far more than
// Limits.Disk to the root filesystem, in files each under RLIMIT_FSIZE,
// fails with a *DiskLimitError, the sandbox is killed, the host's free
// disk never drops by much more than the limit while it writes, and
// nothing of the sandbox is left once it is removed. Without the limit the
// writer would fill 4 GiB.
func TestWritableRootDiskLimit(t *testing.T) {
	forEachTransport(t, func(t *testing.T, c *sandbox.Client) {
		const limit = 128 << 20
		const total = 4 << 30
		sb, err := c.Create(context.Background(), writableRoot(limit))
		require.NoError(t, err)

		dir := testenv.EngineDisk()
		before := testenv.FreeDisk(t, dir)
		worst := testenv.WatchFreeDisk(t, dir)
		script := fmt.Sprintf(`i=0; while [ $((i * 16)) -lt %d ]; do dd if=/dev/zero of=/var/fill$i bs=1M count=16 2>/dev/null || exit 3; i=$((i+1)); done; echo wrote all`, total>>20)
		res, err := sb.Shell(context.Background(), script, sandbox.ExecRequest{Timeout: 5 * time.Minute})
		worstDrop := worst()

		require.Error(t, err, "the writer was stopped: %s", res.Stdout.String())
		var de *sandbox.DiskLimitError
		require.True(t, errors.As(err, &de), "%v", err)
		assert.ErrorIs(t, err, sandbox.ErrDiskLimit)
		assert.ErrorIs(t, err, sandbox.ErrUnusable)
		assert.Equal(t, int64(limit), de.Limit)
		assert.Greater(t, de.Used, int64(limit))
		assert.NotContains(t, res.Stdout.String(), "wrote all")
		// Other users of the machine move the figure a little; the
		// writer alone, unbounded, would take 4 GiB.
		assert.Less(t, worstDrop, int64(1<<30), "free disk dropped by %d bytes at worst", worstDrop)

		_, err = sb.Exec(context.Background(), sandbox.ExecRequest{Cmd: []string{"true"}})
		assert.ErrorIs(t, err, sandbox.ErrDiskLimit, "the sandbox takes no more commands")
		require.NoError(t, sb.Remove(context.Background()))
		t.Logf("layer measured at %d bytes over a limit of %d; free disk dropped by %d bytes at worst", de.Used, de.Limit, worstDrop)
		// The engine's own removal of the killed sandbox (AutoRemove) may
		// have been under way; Remove returns when it is gone.
		assert.Empty(t, sessionContainers(t, c), "nothing of the sandbox is left")
		assert.Less(t, before-testenv.FreeDisk(t, dir), int64(1<<30), "its layer went with it")
	})
}

// TestReadOnlyRootHasNoDiskWatch: Limits.Disk concerns a writable root only;
// a read-only root's sandbox writing to /tmp is not killed for it.
func TestReadOnlyRootHasNoDiskWatch(t *testing.T) {
	c := newClient(t)
	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll(), Limits: sandbox.Limits{Disk: 1 << 20, TmpSize: 64 << 20}})
	res := shT(t, sb, "dd if=/dev/zero of=/tmp/f bs=1M count=8 2>/dev/null; sleep 1; echo done")
	assert.Equal(t, "done\n", res.Stdout.String())
}

// TestRunWritableRootDiskLimit: a one-shot Run is bound the same way.
func TestRunWritableRootDiskLimit(t *testing.T) {
	c := newClient(t)
	res, err := c.Run(context.Background(), writableRoot(64<<20), sandbox.ExecRequest{
		Cmd:     []string{"sh", "-c", "i=0; while [ $i -lt 256 ]; do dd if=/dev/zero of=/var/fill$i bs=1M count=16 2>/dev/null || exit 3; i=$((i+1)); done; echo wrote all"},
		Timeout: 5 * time.Minute,
	})
	assert.ErrorIs(t, err, sandbox.ErrDiskLimit)
	assert.NotContains(t, res.Stdout.String(), "wrote all")
	assert.Eventually(t, func() bool { return len(sessionContainers(t, c)) == 0 }, time.Minute, 100*time.Millisecond, "nothing of the sandbox is left")
}
