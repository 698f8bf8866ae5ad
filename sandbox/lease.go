package sandbox

import (
	"context"
	"fmt"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"sync"

	"github.com/docker/docker/api/types/container"
)

// A sandbox lives no longer than the process that created it. On the Docker
// engine the client holds a lease on each sandbox: an attach to the main
// process's standard input, opened before the sandbox starts and held until
// it is removed. When the process ends, however it ends (Remove, a return
// without Close, log.Fatal, kill -9), the kernel closes the connection, the
// engine closes the main process's input (StdinOnce), and the main process
// (leasedKeepalive, or the agent under agentKeepalive) ends at that EOF,
// which stops the sandbox within a second. Nothing the sandbox's user can
// do keeps the lease open: the write end is the host's connection.
//
// What stays behind is a stopped container (with the volumes made for
// it), which uses no CPU or memory; Prune removes it, and a Client removes
// its own at Remove and Close.

// leaser is implemented by backends that can tie a sandbox's life to the
// client's connection.
type leaser interface {
	// startLeased starts a sandbox created with createRequest.Stdin and
	// holds its main process's input open until release is called or
	// the process ends.
	startLeased(ctx context.Context, id string) (release func(), err error)
}

// leasedKeepalive is keepalive for a leased sandbox (seam.LeasedKeepalive).
var leasedKeepalive = seam.LeasedKeepalive

// leasedMain returns the main process of a leased sandbox for cmd, the one
// agentFor chose.
func leasedMain(cmd []string) []string {
	if len(cmd) == len(agentKeepalive) && cmd[2] == agentKeepalive[2] {
		return agentLeasedKeepalive
	}
	return leasedKeepalive
}

func (d *dockerBackend) startLeased(ctx context.Context, id string) (func(), error) {
	hj, err := d.api.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true})
	if err != nil {
		return nil, fmt.Errorf("attach container: %w", dockerErr(err))
	}
	if err := d.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		hj.Close()
		return nil, dockerErr(err)
	}
	return sync.OnceFunc(hj.Close), nil
}
