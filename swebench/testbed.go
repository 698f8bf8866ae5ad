package swebench

import (
	"context"
	"fmt"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/repo"
	"github.com/swebox/swebox/swebench/spec"
)

// Testbed is how [Plan.Run] prepares an instance's sandbox before it
// applies the model patch: the image, the hardening and /testbed. Task
// environments for agents start from it, so that the agent works in the
// state the model patch is applied to.
type Testbed struct {
	Instance dataset.Instance
	// Image is the instance's image (the test spec's).
	Image string
	// Client is the engine the instance runs on.
	Client *sandbox.Client
	// Spec is the sandbox spec. In prebuilt mode it is complete: for
	// Plan.Run the root filesystem is writable, copy-on-write over the
	// image (SandboxSpec); for a task environment (Plan.Testbed) the root
	// is read-only and /testbed a fresh volume the engine fills from the
	// image (ReadOnlyRootSpec). In workspace mode
	// with Bind, its Workspace is left empty for a host directory that
	// Checkout fills (sandbox.Client.CreateWithWorkspace makes one per
	// sandbox); without Bind, CopyCheckout copies Checkout's directory
	// into the started sandbox's /testbed volume.
	Spec sandbox.Spec
	// Checkout fills an absent or empty host directory with the
	// repository at base_commit, as Run checks it out; nil in prebuilt
	// mode.
	Checkout func(ctx context.Context, dir string) (repo.CheckoutResult, error)
	// Bind: the checkout is bind-mounted at /testbed (the engine shares
	// this machine's files and Config.CopyWorkspace is off).
	Bind bool
	// Workdir is where the repository is: /testbed, or where the row's
	// family's harness has it (spec.Procedure.Workdir).
	Workdir string
}

// Testbed returns how Run prepares instance id's sandbox up to the model
// patch (see [Testbed]). The instance must be one of the plan's Instances,
// and the plan must have connected to its engines (Prepare without
// RewriteReports). With Config.ShareObjects the caller mounts the
// checkout's ObjectsDirs itself.
func (p *Plan) Testbed(id string) (Testbed, error) {
	se, ok := p.e.specs[id]
	if !ok {
		return Testbed{}, fmt.Errorf("testbed: instance %q is not in the plan", id)
	}
	if se.err != nil {
		return Testbed{}, fmt.Errorf("testbed %s: %w", id, se.err)
	}
	inst, _ := p.e.sel.Instance(id)
	if se.ts.Image == "" {
		return Testbed{}, fmt.Errorf("testbed %s: %w", id, &NoImageError{Repo: inst.Repo, Version: inst.Version})
	}
	if len(p.e.cfg.Sandboxes) == 0 {
		return Testbed{}, fmt.Errorf("testbed %s: the plan has no engine", id)
	}
	tb := p.e.testbed(p.e.cfg.Sandboxes[0], inst, se.ts)
	if tb.Spec.Relax.WritableRootFS {
		// A task environment is an agent's sandbox: its root stays
		// read-only and its /testbed is a volume filled from the image.
		tb.Spec = readOnlyRoot(tb.Spec, tb.Workdir)
	}
	return tb, nil
}

// testbed is the one place that says how an instance's sandbox is made.
func (e *evaluator) testbed(client *sandbox.Client, inst dataset.Instance, ts spec.TestSpec) Testbed {
	tb := Testbed{Instance: inst, Image: ts.Image, Client: client, Workdir: ts.Run.Dir()}
	labels := map[string]string{LabelRun: e.cfg.RunID, LabelInstance: inst.InstanceID}
	tb.Spec = SandboxSpec(ts.Image)
	tb.Spec.WorkingDir = tb.Workdir
	tb.Spec.Policy, tb.Spec.Labels, tb.Spec.Runtime, tb.Spec.Limits = evalPolicy, labels, e.cfg.Runtime, e.cfg.Limits
	caps, _ := e.capabilities(inst)
	tb.Spec.Relax.CapAdd = caps
	if e.specs[inst.InstanceID].mode == harness.ModePrebuilt {
		if e.cfg.Runtime != "" {
			// Under another runtime (gVisor) the engine's archive
			// endpoint, which copies the patch and the script in, may
			// not reach the sandbox's own root filesystem; the writable
			// root was measured with the engine's default runtime only,
			// so /testbed stays a volume there.
			tb.Spec = readOnlyRoot(tb.Spec, tb.Workdir)
		}
		return tb
	}
	tb.Spec = readOnlyRoot(tb.Spec, tb.Workdir)
	tb.Bind = !e.cfg.CopyWorkspace && client.SharesHostFiles() && !e.hostCheckout(inst)
	user, owner := workspaceUser()
	// Unless objects are shared, the checkout carries a pack of the base
	// commit's objects and nothing later: the tests cannot read the fix.
	req := repo.CheckoutRequest{Repo: inst.Repo, Commit: inst.Revision(), Owner: owner, SelfContained: !e.cfg.ShareObjects}
	if !tb.Bind {
		// The copy carries the objects it needs and is owned by root,
		// the user of the volume's sandbox.
		req.SelfContained, req.Owner = true, nil
	}
	repos := e.cfg.Repos
	tb.Checkout = func(ctx context.Context, dir string) (repo.CheckoutResult, error) {
		r := req
		r.Dir = dir
		co, err := repos.Checkout(ctx, r)
		if err != nil {
			return co, fmt.Errorf("check out repository: %w", err)
		}
		return co, nil
	}
	if tb.Bind {
		tb.Spec = sandbox.Spec{
			Image: ts.Image, WorkspaceTarget: tb.Workdir, WorkingDir: tb.Workdir,
			User: user, Policy: evalPolicy, Labels: labels, Runtime: e.cfg.Runtime, Limits: e.cfg.Limits,
			Relax: sandbox.Relax{CapAdd: caps},
		}
	}
	return tb
}

// hostCheckout reports whether inst's family checks its revision out on
// the host (family.Family.HostCheckout). Its harness runs git checkout in
// the image's own /testbed, which leaves the files git does not track (the
// outputs of the image's install) in place, so the checkout is copied
// over the image's /testbed, never bind-mounted in its stead.
func (e *evaluator) hostCheckout(inst dataset.Instance) bool {
	fam, _, _ := e.cfg.familyOf(inst)
	return fam != nil && fam.HostCheckout
}

// CopyCheckout copies the checkout in dir into sb's /testbed (or
// Workdir; a fresh volume, as in prebuilt mode), through the engine's
// archive endpoint.
func (tb Testbed) CopyCheckout(ctx context.Context, sb *sandbox.Sandbox, dir string) (sandbox.CopyResult, error) {
	dest := tb.Workdir
	if dest == "" {
		dest = harness.RepoDir
	}
	res, err := sb.CopyIn(ctx, sandbox.CopyInRequest{
		HostPath: dir, Dest: dest, ContentsOnly: true, KeepEscapingSymlinks: true, MaxBytes: copyLimit,
	})
	if err != nil {
		return res, fmt.Errorf("copy the checkout into the container: %w", err)
	}
	return res, nil
}
