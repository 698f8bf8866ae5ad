package swebench

import (
	"fmt"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// runtimeGVisor is gVisor's OCI runtime: its sandboxes run on gVisor's own
// kernel, so a capability granted there is not one over the host's.
const runtimeGVisor = "runsc"

// capabilities are the capabilities an instance's sandbox gets beyond the
// defaults (none), and a line for run_instance.log when upstream adds
// some: upstream's container capabilities (v4.1.0's docker_specs
// run_args, imagebuild.CapAdd) are granted inside gVisor or with
// Config.GrantCapabilities, else left out and said so.
func (e *evaluator) capabilities(inst dataset.Instance) (caps []string, note string) {
	want := imagebuild.CapAdd(inst.Repo, inst.Version)
	switch {
	case len(want) == 0:
		return nil, ""
	case e.cfg.GrantCapabilities:
		return want, fmt.Sprintf("Capabilities %v added to the container, as upstream adds them (GrantCapabilities)", want)
	case e.cfg.Runtime == runtimeGVisor:
		return want, fmt.Sprintf("Capabilities %v added to the container, as upstream adds them (inside gVisor)", want)
	}
	return nil, fmt.Sprintf("Upstream adds capabilities %v to this container; left out: grant them with Config.GrantCapabilities or run under gVisor (Config.Runtime runsc)", want)
}
