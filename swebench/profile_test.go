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
	assert.Equal(t, sandbox.Relax{Root: true}, s.Relax, "root is the only relaxation")
	assert.Equal(t, "/testbed", s.WorkingDir)
	assert.Equal(t, []sandbox.Mount{{Type: "volume", Target: "/testbed"}}, s.Mounts)
}
