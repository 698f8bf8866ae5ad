package swebench_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// A SWE-rebench row is graded as its fork (SWE-bench 4.0.3) grades it
// whatever the run's rules: under v5 a row whose lists are empty, or whose
// PASS_TO_PASS test was skipped, would be graded otherwise.
func TestGradeLogKeepsTheFamilysRules(t *testing.T) {
	rows, err := dataset.LoadDataset("family/testdata/rebench/rows.jsonl")
	require.NoError(t, err)
	for _, inst := range rows {
		if inst.InstanceID != "encode__httpx-3002" && inst.InstanceID != "encode__httpx-3003" {
			continue
		}
		log, err := os.ReadFile("family/testdata/rebench/logs/" + inst.InstanceID + ".log")
		require.NoError(t, err)
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			rep, err := swebench.GradeLog(swebench.GradeRequest{Instance: inst, Log: log, Rules: rules})
			require.NoError(t, err)
			assert.True(t, rep.Resolved, "%s under %s", inst.InstanceID, rules)
			assert.Equal(t, harness.V4, rep.Rules, "%s under %s", inst.InstanceID, rules)
		}
	}
}
