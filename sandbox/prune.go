package sandbox

import (
	"context"
	"errors"
	cerrdefs "github.com/containerd/errdefs"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
)

// PruneRequest selects leftovers to remove.
type PruneRequest struct {
	// Session selects the objects of one session. Empty selects this
	// client's session unless All is set.
	Session string
	// All selects every object the package labelled, whatever the session.
	All bool
	// Labels narrow the selection further, e.g. {"swebox.run": "r1"}.
	Labels map[string]string
}

// PruneResult counts what Prune removed.
type PruneResult struct {
	Containers, Volumes, Networks int
}

// Prune removes containers, volumes and networks the package labelled. Every
// removal is attempted; failures are joined.
func (c *Client) Prune(ctx context.Context, req PruneRequest) (PruneResult, error) {
	f := filters.NewArgs(filters.Arg("label", LabelManaged+"=true"))
	if !req.All {
		s := req.Session
		if s == "" {
			s = c.session
		}
		f.Add("label", LabelSession+"="+s)
	}
	for k, v := range req.Labels {
		f.Add("label", k+"="+v)
	}
	var res PruneResult
	var errs []error
	cs, err := c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return res, c.engineErr("list containers", err)
	}
	for _, ct := range cs {
		if err := c.removeContainer(ctx, ct.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Containers++
	}
	vs, err := c.api.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		errs = append(errs, c.engineErr("list volumes", err))
	} else {
		for _, v := range vs.Volumes {
			if err := c.api.VolumeRemove(ctx, v.Name, true); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, c.engineErr("remove volume", err))
				continue
			}
			res.Volumes++
		}
	}
	ns, err := c.api.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		errs = append(errs, c.engineErr("list networks", err))
	} else {
		for _, n := range ns {
			if err := c.api.NetworkRemove(ctx, n.ID); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, c.engineErr("remove network", err))
				continue
			}
			res.Networks++
		}
	}
	return res, errors.Join(errs...)
}
