package family_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/harness"
)

// TestStrictRulesOnLiveLogs grades every SWE-bench-Live fixture log (the
// logs TestLiveAgreesWithUpstream holds, framed as the script prints
// them) in both grading modes: strict grading's log rules keep the
// official verdict of each but one, python-attrs__attrs-15, made to show
// that the last of "FAILED t.py::test_a" and "PASSED t.py::test_a" wins:
// strict grading refuses it by its conflicting-lines rule.
func TestStrictRulesOnLiveLogs(t *testing.T) {
	explained := map[string]string{
		"python-attrs__attrs-15": "refused by conflicting-lines: the log reports t.py::test_a both passing and failing",
	}
	unchanged := 0
	rows := loadLiveRows(t)
	for _, inst := range rows {
		t.Run(inst.InstanceID, func(t *testing.T) {
			logText, err := os.ReadFile(filepath.Join("testdata/live/logs", inst.InstanceID+".log"))
			require.NoError(t, err)
			out := "+ bash run_test.sh\n" + harness.StartTestOutput + "\n" + string(logText) + harness.EndTestOutput + "\n"
			req := swebench.GradeRequest{Instance: inst, Log: []byte(out), Family: "swe-bench-live"}
			off, err := swebench.GradeLog(req)
			require.NoError(t, err)
			assert.Nil(t, off.Notes.Strict)
			req.GradingMode = swebench.GradingStrict
			st, err := swebench.GradeLog(req)
			require.NoError(t, err)
			require.NotNil(t, st.Notes.Strict)
			assert.Equal(t, off.Resolved, st.Notes.Strict.OfficialResolved)
			if why, ok := explained[inst.InstanceID]; ok {
				assert.True(t, off.Resolved)
				assert.False(t, st.Resolved)
				assert.Contains(t, strings.Join(st.Notes.Strict.Findings, "\n"), why)
				return
			}
			if assert.Equal(t, off.Resolved, st.Resolved, "%v", st.Notes.Strict.Findings) {
				unchanged++
			}
		})
	}
	t.Logf("strict log rules: %d of %d SWE-bench-Live logs keep their official verdict", unchanged, len(rows))
}
