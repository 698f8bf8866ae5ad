package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// A sandbox with Relax.WritableRootFS writes to its container's own layer,
// copy-on-write over the image, which the engine removes with the
// container. Limits.Disk bounds that layer. Storage drivers that have a
// quota (--storage-opt size, overlay2 on xfs with pquota, btrfs, zfs) are
// not relied on, since the common ones (overlay2 on ext4, fuse-overlayfs)
// have none: the client measures the layer while the sandbox lives and
// kills the sandbox once the layer holds more than Limits.Disk. The
// measurement runs more often the closer the layer is to its limit, so the
// overshoot is what the sandbox writes in one interval (diskMinPoll at
// worst) on top of the limit.

// ErrDiskLimit: a sandbox wrote more to its writable root filesystem than
// Limits.Disk allows and was killed. A *DiskLimitError matches it.
var ErrDiskLimit = errors.New("disk limit exceeded")

// DiskLimitError reports a sandbox killed for growing its writable root
// filesystem past Limits.Disk. It matches ErrDiskLimit and ErrUnusable: the
// sandbox takes no more commands.
type DiskLimitError struct {
	Sandbox string // the sandbox's id
	Limit   int64  // Limits.Disk, bytes
	Used    int64  // bytes the layer held when measured over the limit
}

func (e *DiskLimitError) Error() string {
	return fmt.Sprintf("sandbox %s wrote %d bytes to its root filesystem, over its limit of %d bytes (Limits.Disk); the container was killed",
		shortID(e.Sandbox), e.Used, e.Limit)
}

func (e *DiskLimitError) Unwrap() []error { return []error{ErrDiskLimit, ErrUnusable} }

// diskMeter is implemented by backends that can measure a sandbox's
// writable layer. DiskMeter returns a function that reports the bytes of
// disk the layer of sandbox id takes now; a sandbox that is gone is
// errNotFound.
type diskMeter interface {
	DiskMeter(ctx context.Context, id string) (func(context.Context) (int64, error), error)
}

// How often a writable layer is measured: the time the sandbox would need
// to fill what is left below its limit at diskRate, within these bounds.
const (
	diskRate    = 1 << 30 // bytes per second
	diskMinPoll = 50 * time.Millisecond
	diskMaxPoll = 2 * time.Second
)

// diskPoll is the wait before the next measurement of a layer that holds
// used of limit bytes.
func diskPoll(used, limit int64) time.Duration {
	left := max(limit-used, 0)
	d := time.Duration(float64(left) / diskRate * float64(time.Second))
	return min(max(d, diskMinPoll), diskMaxPoll)
}

// watchDisk measures the writable layer of sandbox id (a defaulted spec
// s) until stop is called, and calls trip once, from another goroutine,
// when the layer holds more than s.Limits.Disk. A spec with a read-only
// root, or a backend that bounds the layer itself (no diskMeter), needs no
// watch.
func (c *Client) watchDisk(ctx context.Context, id string, s Spec, trip func(*DiskLimitError)) (stop func(), err error) {
	m, ok := c.b.(diskMeter)
	if !s.Relax.WritableRootFS || !ok {
		return func() {}, nil
	}
	measure, err := m.DiskMeter(ctx, id)
	if err != nil {
		return nil, c.engineErr("measure the writable layer", err)
	}
	done := make(chan struct{})
	limit := s.Limits.Disk
	go func() {
		ctx := context.Background()
		delay := diskMinPoll
		for {
			select {
			case <-done:
				return
			case <-time.After(delay):
			}
			used, err := measure(ctx)
			switch {
			case errors.Is(err, errNotFound):
				return
			case err != nil:
				c.log.Warn("measuring a writable layer failed", "id", shortID(id), "err", err)
				delay = diskMinPoll
				continue
			case used > limit:
				select {
				case <-done:
				default:
					trip(&DiskLimitError{Sandbox: id, Limit: limit, Used: used})
				}
				return
			}
			delay = diskPoll(used, limit)
		}
	}()
	return sync.OnceFunc(func() { close(done) }), nil
}

// tripDisk marks the sandbox unusable with e and kills its container.
func (s *Sandbox) tripDisk(e *DiskLimitError) {
	s.c.log.Warn("killing container: its writable layer is over its limit", "id", shortID(s.id), "used", e.Used, "limit", e.Limit)
	s.mu.Lock()
	s.unusable, s.diskErr = e, e
	s.mu.Unlock()
	kctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
	defer cancel()
	if err := s.Kill(kctx, "KILL"); err != nil {
		s.c.log.Warn("killing a container over its disk limit failed", "id", shortID(s.id), "err", err)
	}
}

// diskExceeded is the *DiskLimitError of a sandbox killed for its disk use,
// else nil.
func (s *Sandbox) diskExceeded() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.diskErr == nil {
		return nil
	}
	return s.diskErr
}

// DiskMeter measures the container's upper directory on this machine's
// disk when the engine's storage driver has one (overlay2, fuse-overlayfs)
// that this process can read; otherwise it asks the engine for the
// container's SizeRw, which some drivers compute slowly (fuse-overlayfs
// compares the layer with the image's files: seconds).
func (d *dockerBackend) DiskMeter(ctx context.Context, id string) (func(context.Context) (int64, error), error) {
	info, err := d.api.ContainerInspect(ctx, id)
	if err != nil {
		return nil, dockerErr(err)
	}
	if upper := info.GraphDriver.Data["UpperDir"]; upper != "" && d.Info().SharesHostFiles {
		if fi, err := os.Lstat(upper); err == nil && fi.IsDir() {
			return func(ctx context.Context) (int64, error) {
				n, err := dirDisk(upper)
				if errors.Is(err, fs.ErrNotExist) {
					return 0, classified(errNotFound, err)
				}
				return n, err
			}, nil
		}
	}
	return func(ctx context.Context) (int64, error) {
		cs, err := d.api.ContainerList(ctx, container.ListOptions{All: true, Size: true, Filters: filters.NewArgs(filters.Arg("id", id))})
		if err != nil {
			return 0, dockerErr(err)
		}
		if len(cs) == 0 {
			return 0, classified(errNotFound, fmt.Errorf("container %s is gone", shortID(id)))
		}
		return cs[0].SizeRw, nil
	}, nil
}

// dirDisk is the disk that the tree under dir takes: each entry's allocated
// blocks, at least its size for a file (a sparse file counts whole), and at
// least one block for every entry. Links are not followed; entries that
// vanish during the walk count nothing.
func dirDisk(dir string) (int64, error) {
	if _, err := os.Lstat(dir); err != nil {
		return 0, err
	}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		total += entryDisk(fi)
		return nil
	})
	return total, err
}

// diskBlock is the least an entry of a layer is counted for: an inode and
// a block of a common file system.
const diskBlock = 4096
