package sandbox

import (
	"context"
	"errors"
	"fmt"
)

// ListRequest selects objects the package labelled.
type ListRequest struct {
	// Session selects the objects of one session. Empty selects this
	// client's session unless All is set.
	Session string
	// All selects every object the package labelled, whatever the session.
	All bool
	// Labels narrow the selection further, e.g. {"swebox.run": "r1"}; an
	// empty value selects every value of its key.
	Labels map[string]string
	// Stopped narrows the sandboxes to those whose main process has ended
	// (stopped, or left by a process that died: its lease ended, see
	// Client.Create) and those whose owner, a process of this machine
	// (LabelOwner), no longer runs. Prune then removes only those and the volumes and
	// networks no running sandbox uses, so that a program can clean up
	// after a dead one of the same session without touching a live one's.
	Stopped bool
}

// PruneRequest selects leftovers to remove, as ListRequest does.
type PruneRequest ListRequest

// PruneResult counts what Prune removed.
type PruneResult struct {
	Containers, Volumes, Networks int
}

// List returns the objects (sandboxes, their volumes and networks) the
// package labelled on the engine, sandboxes first.
func (c *Client) List(ctx context.Context, req ListRequest) ([]Object, error) {
	labels := map[string]string{LabelManaged: "true"}
	if !req.All {
		s := req.Session
		if s == "" {
			s = c.session
		}
		labels[LabelSession] = s
	}
	for k, v := range req.Labels {
		labels[k] = v
	}
	objs, err := c.b.List(ctx, labels)
	if err != nil {
		return nil, c.engineErr("list objects", err)
	}
	if req.Stopped {
		kept := objs[:0]
		for _, o := range objs {
			if o.Kind == KindSandbox {
				st, err := c.b.Inspect(ctx, o.ID)
				if errors.Is(err, errNotFound) || err == nil && st.Running && !ownerGone(o.Labels[LabelOwner]) {
					continue
				}
				if err != nil {
					return nil, c.engineErr("inspect sandbox "+shortID(o.ID), err)
				}
			}
			kept = append(kept, o)
		}
		objs = kept
	}
	return objs, nil
}

// Prune removes the objects List selects. Every removal is attempted;
// failures are joined. An object already gone (a sandbox's volume goes with
// it) is not counted.
func (c *Client) Prune(ctx context.Context, req PruneRequest) (PruneResult, error) {
	var res PruneResult
	objs, err := c.List(ctx, ListRequest(req))
	if err != nil {
		return res, err
	}
	var errs []error
	for _, o := range objs {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		err := c.b.RemoveObject(rctx, o)
		cancel()
		switch {
		case errors.Is(err, errNotFound):
			continue
		case req.Stopped && o.Kind != KindSandbox && errors.Is(err, errConflict):
			continue // in use by a running sandbox
		case err != nil && !(o.Kind == KindSandbox && errors.Is(err, errConflict)):
			errs = append(errs, c.engineErr(fmt.Sprintf("remove %s %s", o.Kind, shortID(o.ID)), err))
			continue
		}
		switch o.Kind {
		case KindSandbox:
			res.Containers++
			if err := removeAgentDir(o.Labels[labelAgentDir]); err != nil {
				errs = append(errs, err)
			}
		case KindVolume:
			res.Volumes++
		case KindNetwork:
			res.Networks++
		}
	}
	if len(req.Labels) == 0 && !req.Stopped {
		// The socket directories of the session's sandboxes that never got
		// a container (a crash between the two).
		session := req.Session
		if session == "" {
			session = c.session
		}
		if err := pruneAgentDirs(session, req.All); err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}
