package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// reaper removes, once per client, what sandboxes whose owner process is
// gone left on the engine and the host (reapOrphans).
type reaper struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{} // closed when the sweep has ended; nil before it starts
}

// startReap starts the client's sweep of orphans at its first sandbox, on a
// backend that ties sandboxes to their owner (leaser). It runs in the
// background, for at most teardownTimeout; Close waits for it to end.
func (c *Client) startReap() {
	if _, ok := c.b.(leaser); !ok {
		return
	}
	c.reap.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), teardownTimeout)
		c.reap.cancel = cancel
		c.reap.done = make(chan struct{})
		go func() {
			defer close(c.reap.done)
			defer cancel()
			if err := c.reapOrphans(ctx); err != nil {
				c.log.Warn("remove the leftovers of ended programs", "cause", err)
			}
		}()
	})
}

// stopReap waits for the sweep, if it runs, to end. It is not cut short:
// a removal the engine carries out after its caller gave up (rootless
// Podman takes a second or more to remove a container) would leave what
// goes after it, the sandbox's volume, to the next client.
func (c *Client) stopReap() {
	c.reap.once.Do(func() {}) // no sweep starts after Close
	if c.reap.done != nil {
		<-c.reap.done
	}
}

// reapOrphans removes every object the package labelled, of any session,
// whose owner (LabelOwner) is a process of this machine that no longer
// runs, and the exec agent directories of such processes. A sandbox stopped
// by its lease is gone already (AutoRemove); these are the rest: a sandbox
// created but never started, a one-shot Run's container, storage still in
// use when its sandbox went (removed once free), and what an older version
// left.
func (c *Client) reapOrphans(ctx context.Context) error {
	objs, err := c.b.List(ctx, map[string]string{LabelManaged: "true", LabelOwner: ""})
	if err != nil {
		return c.engineErr("list objects", err)
	}
	var errs []error
	for _, o := range objs {
		if !ownerGone(o.Labels[LabelOwner]) {
			continue
		}
		err := c.b.RemoveObject(ctx, o)
		switch {
		case errors.Is(err, errNotFound), errors.Is(err, errConflict):
			continue // gone meanwhile, or still in use
		case err != nil:
			errs = append(errs, c.engineErr(fmt.Sprintf("remove %s %s", o.Kind, shortID(o.ID)), err))
			continue
		}
		c.log.Debug("removed an orphan", "kind", o.Kind, "id", shortID(o.ID), "owner", o.Labels[LabelOwner])
		if o.Kind == KindSandbox {
			if err := removeAgentDir(o.Labels[labelAgentDir]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(append(errs, reapAgentDirs())...)
}

// agentOwnerFile, in a sandbox's agent directory, holds the owner label of
// the process that made it.
const agentOwnerFile = "owner"

// reapAgentDirs removes the agent directories whose owner is gone.
func reapAgentDirs() error {
	base, entries, err := agentDirs()
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		owner, err := os.ReadFile(filepath.Join(base, e.Name(), agentOwnerFile))
		if err != nil || !ownerGone(string(owner)) {
			continue
		}
		if err := removeAgentDir(e.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
