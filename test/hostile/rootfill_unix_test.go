//go:build unix

package hostile_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestHostileRootFill: in prebuilt mode the root filesystem is writable,
// copy-on-write over the instance image. A prediction whose tests write
// 4 GiB there, in files each under RLIMIT_FSIZE, is stopped at
// Limits.Disk: the instance is an error (disk_limit, an infrastructure
// outcome: the official harness sets no such bound), the host's free disk
// never drops by much more than the limit meanwhile, nothing of the
// sandbox is left, and an honest instance beside it stays resolved.
func TestHostileRootFill(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	ns := "swebox-hostile-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	const honest, hostile = "ok__calc-1", "hostile__rootfill-1"
	var refs []string
	for _, id := range []string{honest, hostile} {
		refs = append(refs, harness.InstanceImage(id, ns, "latest"))
	}
	swebenchtest.BuildTestbedImage(t, c, filepath.Join(p.Sources, "swebox-test__calc"), refs...)

	const limit = 128 << 20
	fill := fmt.Sprintf(`import os


def pytest_sessionstart(session):
    print("ROOT-FILL", flush=True)
    chunk = b"x" * (1 << 20)
    for i in range(%d):
        with open(f"/var/fill{i}", "wb") as f:
            for _ in range(16):
                f.write(chunk)
    print("ROOT-FILLED", flush=True)
`, (4<<30)/(16<<20))
	ds := []dataset.Instance{p.Instance(honest), p.Instance(hostile)}
	preds := []dataset.Prediction{swebenchtest.Pred(honest, swebenchtest.Gold), swebenchtest.Pred(hostile, withConftest(swebenchtest.Gold, fill))}
	cfg := p.Config(t, c, "hostile-rootfill", ds, preds)
	cfg.Mode, cfg.Namespace, cfg.Repos, cfg.Image = harness.ModePrebuilt, ns, nil, ""
	cfg.Limits.Disk = limit

	dir := testenv.EngineDisk()
	before := testenv.FreeDisk(t, dir)
	worst := testenv.WatchFreeDisk(t, dir)
	res, err := swebench.Evaluate(context.Background(), cfg)
	worstDrop := worst()
	require.NoError(t, err)

	got := swebenchtest.ByID(res)
	assert.Equal(t, swebench.StatusResolved, got[honest].Status, got[honest].Error)
	r := got[hostile]
	assert.Equal(t, swebench.StatusError, r.Status)
	assert.Equal(t, swebench.OutcomeDiskLimit, res.Outcomes[hostile])
	assert.ErrorIs(t, r.Err, sandbox.ErrDiskLimit)
	assert.Contains(t, r.Error, "Limits.Disk")
	assert.True(t, swebench.OutcomeDiskLimit.Infrastructure())
	out := swebenchtest.ReadFile(t, cfg, hostile, "test_output.txt")
	assert.NotContains(t, out, "ROOT-FILLED")
	assert.NoFileExists(t, filepath.Join(swebenchtest.InstanceDir(cfg, hostile), "report.json"), "an error instance has no report.json")
	// The writer alone, unbounded, would take 4 GiB; other users of the
	// machine move the figure a little.
	assert.Less(t, worstDrop, int64(1<<30), "free disk dropped by %d bytes at worst", worstDrop)
	assert.Less(t, before-testenv.FreeDisk(t, dir), int64(1<<30), "the sandbox's layer went with it")
	assert.Equal(t, testenv.Leftovers{}, testenv.CountLeftovers(t, c, c.Session()), "no container or volume of the run is left")
}
