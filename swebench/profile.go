package swebench

import (
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
)

// SandboxSpec is the sandbox spec that evaluates in an official SWE-bench
// instance image (prebuilt mode): the repository is at /testbed inside the
// image and the eval script runs as root. The root filesystem is writable,
// copy-on-write over the image as the official harness's container is, so
// /testbed costs nothing to prepare and the script's steps outside it (git
// config --global, the install step writing site-packages) work as they do
// upstream. What the sandbox writes is bounded by Limits.Disk and goes with
// the sandbox. Root and the writable root are the relaxations; capabilities
// stay dropped, the network off and no-new-privileges on.
func SandboxSpec(image string) sandbox.Spec {
	return sandbox.Spec{
		Image:      image,
		User:       "0:0",
		WorkingDir: harness.RepoDir,
		Relax:      sandbox.Relax{Root: true, WritableRootFS: true},
	}
}

// ReadOnlyRootSpec is SandboxSpec with the root filesystem read-only and
// /testbed a fresh anonymous volume that the engine fills from the image
// (a copy, which costs time in proportion to the repository). Task
// environments use it, since agents' sandboxes keep the read-only root, and
// so does workspace mode's copy of a checkout into a sandbox.
func ReadOnlyRootSpec(image string) sandbox.Spec {
	return readOnlyRoot(SandboxSpec(image), harness.RepoDir)
}

// readOnlyRoot makes s's root read-only and workdir a fresh volume.
func readOnlyRoot(s sandbox.Spec, workdir string) sandbox.Spec {
	s.Relax.WritableRootFS = false
	s.Mounts = append(s.Mounts, sandbox.Mount{Type: "volume", Target: workdir})
	return s
}
