package family_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// A SWE-PolyBench row's spec carries its harness's procedure, in the
// working directory its image gets from the row's Dockerfile (the last
// absolute WORKDIR; /testbed without one).
func TestPolyBenchProcedure(t *testing.T) {
	type testCase struct {
		name, dockerfile, dir string
	}
	for _, tc := range []testCase{
		{"testbed", "FROM polybench_java_base\nWORKDIR /testbed\nCOPY . .\n", "/testbed"},
		{"last wins", "FROM x\nWORKDIR /app\nRUN make\nworkdir /srv/repo/\nCOPY . .\n", "/srv/repo"},
		{"relative ignored", "FROM x\nWORKDIR /app\nWORKDIR sub\n", "/app"},
		{"none", "FROM x\nCOPY . /testbed\n", harness.RepoDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
			inst := dataset.Instance{InstanceID: "google__gson-1", Repo: "google/gson", BaseCommit: "0123456789abcdef0123456789abcdef01234567", TestPatch: "diff --git a/t b/t\n",
				Extra: map[string]json.RawMessage{"Dockerfile": str(tc.dockerfile), "test_command": str("mvn test"), "F2P": str("['a']"), "P2P": str("[]")}}
			f, ok := family.Lookup("swe-polybench")
			require.True(t, ok)
			ts, err := f.TestSpec(inst)
			require.NoError(t, err)
			assert.Equal(t, tc.dir, ts.Run.Dir())
			assert.False(t, ts.Run.Official())
			assert.True(t, ts.Run.TestPatchFirst)
			assert.True(t, ts.Run.PatchFailureGraded)
			assert.Equal(t, spec.LogStderrFirst, ts.Run.Log)
			cmds, err := ts.Run.Patches(harness.V4, "/p.diff")
			require.NoError(t, err)
			assert.Equal(t, [][]string{
				{"git", "apply", "-v", "--ignore-whitespace", "--reject", "/p.diff"},
				{"patch", "--batch", "--fuzz=5", "-p1", "-f", "-i", "/p.diff"},
			}, cmds)
			assert.Equal(t, "\nContainer exited with status code: 3\nContainer exited with status code: 3", ts.Run.Log.Trailer(3))
		})
	}
	assert.True(t, spec.Procedure{}.Official())
	assert.Equal(t, "", spec.LogMerged.Trailer(1))
}
