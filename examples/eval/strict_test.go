package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
)

// --strict selects the library's strict grading; without it grading is
// the official one.
func TestStrictFlag(t *testing.T) {
	type testCase struct {
		name string
		args []string
		want swebench.GradingMode
	}
	for _, tc := range []testCase{
		{name: "default", args: []string{"-p", "gold", "--run_id", "r1"}, want: swebench.GradingOfficial},
		{name: "strict", args: []string{"-p", "gold", "--run_id", "r1", "--strict"}, want: swebench.GradingStrict},
		{name: "strict with v4 rules", args: []string{"-p", "gold", "--run_id", "r1", "--grading", "v4", "--strict"}, want: swebench.GradingStrict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, runConfig(o).GradingMode)
		})
	}
}
