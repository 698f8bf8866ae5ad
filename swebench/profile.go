package swebench

import (
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
)

// SandboxSpec is the sandbox spec for official SWE-bench instance images:
// the repository is at /testbed inside the image and the eval script runs
// as root. /testbed becomes a fresh anonymous volume that the engine fills
// from the image, so it is writable while the root filesystem stays
// read-only. Root is the only relaxation; capabilities stay dropped and the
// network stays off.
func SandboxSpec(image string) sandbox.Spec {
	return sandbox.Spec{
		Image:      image,
		User:       "0:0",
		WorkingDir: harness.RepoDir,
		Mounts:     []sandbox.Mount{{Type: "volume", Target: harness.RepoDir}},
		Relax:      sandbox.Relax{Root: true},
	}
}
