package family_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// liveExpected is one row of testdata/live/expected.json: SWE-bench-Live's
// own run_instance (evaluation.py at 70ec57e) on the row and its log
// (testdata/live/regenerate.sh).
type liveExpected struct {
	Resolved   bool
	FailToPass map[string][]string `json:"FAIL_TO_PASS"`
	PassToPass map[string][]string `json:"PASS_TO_PASS"`
}

func loadLiveRows(t *testing.T) []dataset.Instance {
	t.Helper()
	f, err := os.Open("testdata/live/rows.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var rows []dataset.Instance
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var in dataset.Instance
		require.NoError(t, json.Unmarshal(sc.Bytes(), &in))
		rows = append(rows, in)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

// Every fixture row is SWE-bench-Live's by its own fields, runs in the
// image it names, and is graded as Live's own evaluation.py grades it:
// the same verdict and the same success and failure lists.
func TestLiveAgreesWithUpstream(t *testing.T) {
	var expected map[string]liveExpected
	b, err := os.ReadFile("testdata/live/expected.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	rows := loadLiveRows(t)
	require.Len(t, expected, len(rows))
	agree := 0
	for _, inst := range rows {
		t.Run(inst.InstanceID, func(t *testing.T) {
			f, _, err := family.Resolve(inst, family.Hint{Dataset: "SWE-bench/SWE-bench_Lite"})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, "swe-bench-live", f.Name)
			ts, err := f.TestSpec(inst, spec.WithMode(harness.ModePrebuilt))
			require.NoError(t, err)
			assert.Equal(t, family.GradingLive, ts.Grading)
			assert.Equal(t, "starryzhang/sweb.eval.x86_64."+strings.ToLower(strings.ReplaceAll(inst.InstanceID, "__", "_1776_")), ts.Image)
			script := ts.EvalScript(spec.ScriptOptions{})
			assert.Contains(t, script, "cat > run_test.sh <<'CC_PROMPT'\npytest -rA t.py\nCC_PROMPT\nbash run_test.sh > testlog.out 2>&1\n")
			assert.Contains(t, script, "echo '"+harness.StartTestOutput+"'\ncat testlog.out\n")

			logText, err := os.ReadFile(filepath.Join("testdata/live/logs", inst.InstanceID+".log"))
			require.NoError(t, err)
			// What the script writes: commands traced, then the print
			// command's output between the markers.
			out := "+ bash run_test.sh\n" + harness.StartTestOutput + "\n" + string(logText) + harness.EndTestOutput + "\n"
			rep, err := grade.Grade(grade.Input{InstanceID: inst.InstanceID, Log: out, Parser: ts.Parser, Repo: inst.Repo,
				FailToPass: inst.FailToPass, PassToPass: inst.PassToPass, Grading: ts.Grading})
			require.NoError(t, err)
			want := expected[inst.InstanceID]
			require.NotNil(t, rep.TestsStatus)
			sorted := func(s []string) []string { s = append([]string{}, s...); sort.Strings(s); return s }
			ok := assert.Equal(t, want.Resolved, rep.Resolved) &&
				assert.Equal(t, want.FailToPass["success"], sorted(rep.TestsStatus.FailToPass.Success)) &&
				assert.Equal(t, want.FailToPass["failure"], sorted(rep.TestsStatus.FailToPass.Failure)) &&
				assert.Equal(t, want.PassToPass["success"], sorted(rep.TestsStatus.PassToPass.Success)) &&
				assert.Equal(t, want.PassToPass["failure"], sorted(rep.TestsStatus.PassToPass.Failure))
			assert.Contains(t, string(rep.Encode()), `"grading": "swe-bench-live"`)
			if ok {
				agree++
			}
		})
	}
	t.Logf("SWE-bench-Live: %d of %d fixture verdicts and lists agree with evaluation.py at 70ec57e", agree, len(rows))
}

// A row whose log parser is a Python program is not run on a guess.
func TestLiveRefusesScriptParsers(t *testing.T) {
	inst := loadLiveRows(t)[0]
	inst.LogParser = "def parser(log):\n    return {}\n"
	f, _ := family.Of(inst)
	require.NotNil(t, f)
	_, err := f.TestSpec(inst)
	assert.ErrorIs(t, err, family.ErrParserScript)
}
