package swebench_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

func TestSandboxSpec(t *testing.T) {
	s := swebench.SandboxSpec("sweb.eval.x86_64.a__b-1:latest")
	require.NoError(t, s.Validate())
	assert.Equal(t, sandbox.Relax{Root: true, WritableRootFS: true}, s.Relax, "root and a writable root are the only relaxations")
	assert.Equal(t, "/testbed", s.WorkingDir)
	assert.Empty(t, s.Mounts, "/testbed is the image's own, copy-on-write")

	ro := swebench.ReadOnlyRootSpec("sweb.eval.x86_64.a__b-1:latest")
	require.NoError(t, ro.Validate())
	assert.Equal(t, sandbox.Relax{Root: true}, ro.Relax, "root is the only relaxation")
	assert.Equal(t, []sandbox.Mount{{Type: "volume", Target: "/testbed"}}, ro.Mounts)
}
