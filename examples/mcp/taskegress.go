package main

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
)

// checkEgress refuses hosts the server does not allow (--egress_allow).
func (s *server) checkEgress(hosts []string) error {
	for _, h := range hosts {
		if !slices.Contains(s.cfg.EgressAllow, h) {
			if len(s.cfg.EgressAllow) == 0 {
				return toolErrorf("this server grants no network access; omit egress")
			}
			return toolErrorf("egress host %q is not allowed on this server; allowed: %s", h, strings.Join(s.cfg.EgressAllow, ", "))
		}
	}
	return nil
}

// taskEgress is a task session's way out: its own egress proxy admitting
// the hosts it asked for, and the launcher its commands run in.
type taskEgress struct {
	px  *egress.Proxy
	sb  *agent.SandboxEgress
	dir string // the launcher's directory
}

// newTaskEgress starts a proxy for hosts; nil when hosts is empty.
func (s *server) newTaskEgress(hosts []string) (*taskEgress, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	px, err := egress.Start(egress.Allowlist{Hosts: hosts}, egress.WithLogger(s.calls))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.evals.workDir, "task-egress-")
	if err != nil {
		return nil, errors.Join(err, px.Close())
	}
	sb, err := agent.NewSandboxEgress(px, dir)
	if err != nil {
		return nil, errors.Join(err, px.Close(), fsutil.RemoveAll(dir))
	}
	return &taskEgress{px: px, sb: sb, dir: dir}, nil
}

// spec edits a task sandbox's spec to reach the proxy; nil without egress.
func (te *taskEgress) spec() func(*sandbox.Spec) {
	if te == nil {
		return nil
	}
	return te.sb.Apply
}

// command wraps a command of the agent's in the launcher.
func (te *taskEgress) command(argv []string) []string {
	if te == nil {
		return argv
	}
	return te.sb.Command(argv)
}

// Close stops the proxy and removes the launcher. Safe on nil.
func (te *taskEgress) Close() error {
	if te == nil {
		return nil
	}
	return errors.Join(te.px.Close(), fsutil.RemoveAll(te.dir))
}
