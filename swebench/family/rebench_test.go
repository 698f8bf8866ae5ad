package family_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// upstreamReport is one row of a family's expected.json: its harness's own
// get_eval_report (and image name) on the row and its log.
type upstreamReport struct {
	Image       string
	Resolved    bool
	Applied     bool                           `json:"patch_successfully_applied"`
	TestsStatus map[string]map[string][]string `json:"tests_status"`
	// Raises names the exception the harness's parser raised (it writes
	// no report then).
	Raises string
}

// gradedBy is the rule set a row is graded by in a run with runRules, as
// swebench.GradeLog chooses it: the family's where it keeps one.
func gradedBy(runRules harness.Rules, ts spec.TestSpec) harness.Rules {
	if ts.Rules != "" {
		return ts.Rules
	}
	return runRules
}

func loadRows(t *testing.T, path string) []dataset.Instance {
	t.Helper()
	rows, err := dataset.LoadDataset(path)
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	return rows
}

// agreeWithUpstream compares, for every fixture row of dir, the family's
// image, eval script and verdict with what the family's own harness gave
// (dir/expected.json, dir/expected/<id>.eval.sh), and returns how many
// rows agreed on all three.
func agreeWithUpstream(t *testing.T, dir, famName, hubName string, runRules harness.Rules) (agree, total int) {
	t.Helper()
	var expected map[string]upstreamReport
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	rows := loadRows(t, filepath.Join(dir, "rows.jsonl"))
	require.Len(t, expected, len(rows))
	for _, inst := range rows {
		t.Run(inst.InstanceID, func(t *testing.T) {
			f, _, err := family.Resolve(inst, family.Hint{Dataset: hubName})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, famName, f.Name)
			want := expected[inst.InstanceID]
			ts, err := f.TestSpec(inst, spec.WithMode(harness.ModePrebuilt), spec.WithNamespace(f.Namespace))
			require.NoError(t, err)
			okImage := assert.Equal(t, want.Image, ts.Image)
			script, err := os.ReadFile(filepath.Join(dir, "expected", inst.InstanceID+".eval.sh"))
			require.NoError(t, err)
			okScript := assert.Equal(t, string(script), ts.EvalScript(spec.ScriptOptions{NoExitCode: true}))

			logText, err := os.ReadFile(filepath.Join(dir, "logs", inst.InstanceID+".log"))
			require.NoError(t, err)
			rep, err := grade.Grade(grade.Input{InstanceID: inst.InstanceID, Log: string(logText), Parser: ts.Parser,
				Repo: inst.Repo, Version: inst.Version, FailToPass: inst.FailToPass, PassToPass: inst.PassToPass,
				FailOnly: ts.EvalType == dataset.EvalTypeFailOnly, Rules: gradedBy(runRules, ts), Grading: ts.Grading})
			if want.Raises != "" {
				if assert.ErrorIs(t, err, logparse.ErrParserRaised, want.Raises) && okImage && okScript {
					agree++
				}
				return
			}
			require.NoError(t, err)
			okVerdict := assert.Equal(t, want.Resolved, rep.Resolved) && assert.Equal(t, want.Applied, rep.PatchSuccessfullyApplied)
			if want.TestsStatus == nil {
				okVerdict = okVerdict && assert.Nil(t, rep.TestsStatus)
			} else if okVerdict = okVerdict && assert.NotNil(t, rep.TestsStatus); okVerdict {
				sorted := func(s []string) []string { s = append([]string{}, s...); sort.Strings(s); return s }
				for _, c := range []struct {
					key  string
					list grade.Results
				}{{"FAIL_TO_PASS", rep.TestsStatus.FailToPass}, {"PASS_TO_PASS", rep.TestsStatus.PassToPass}} {
					okVerdict = assert.Equal(t, want.TestsStatus[c.key]["success"], sorted(c.list.Success), c.key) && okVerdict
					okVerdict = assert.Equal(t, want.TestsStatus[c.key]["failure"], sorted(c.list.Failure), c.key) && okVerdict
				}
			}
			if okImage && okScript && okVerdict {
				agree++
			}
		})
	}
	return agree, len(rows)
}

// Every fixture row is SWE-rebench's by its install_config, whatever
// dataset it is read from (a repository of the official tables included),
// and gives the fork's own image name, eval script (byte for byte) and
// verdict with its lists, under either rule set.
func TestRebenchAgreesWithUpstream(t *testing.T) {
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		for _, hub := range []string{"nebius/SWE-rebench", "nebius/SWE-rebench-leaderboard", "SWE-bench/SWE-bench", ""} {
			agree, total := agreeWithUpstream(t, "testdata/rebench", "swe-rebench", hub, rules)
			assert.Equal(t, total, agree)
			t.Logf("SWE-rebench (dataset %q, rules %s): %d of %d fixture rows agree with SWE-rebench/SWE-bench-fork at 39316f7", hub, rules, agree, total)
		}
	}
}

// A row whose install_config the fork would raise on is refused, not run
// on a guess.
func TestRebenchRefusesRowsItsHarnessCannotRun(t *testing.T) {
	base := loadRows(t, "testdata/rebench/rows.jsonl")[0]
	for _, tc := range []struct {
		name, repo, config string
	}{
		{"no test command", "", `{"log_parser": "parse_log_pytest", "test_cmd": null}`},
		{"no parser", "", `{"test_cmd": "pytest"}`},
		{"unknown parser", "", `{"test_cmd": "pytest", "log_parser": "parse_log_nothing"}`},
		{"not an object", "", `["pytest"]`},
		{"eval_commands not a list", "", `{"test_cmd": "pytest", "log_parser": "parse_log_pytest", "eval_commands": "x"}`},
		{"a repository of the fork's Go scripts", "gin-gonic/gin", `{"test_cmd": "go test", "log_parser": "parse_log_pytest"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := base
			inst.Extra = map[string]json.RawMessage{"install_config": json.RawMessage(tc.config)}
			if tc.repo != "" {
				inst.Repo = tc.repo
			}
			f, _ := family.Of(inst)
			require.NotNil(t, f)
			require.Equal(t, "swe-rebench", f.Name)
			_, err := f.TestSpec(inst)
			assert.ErrorIs(t, err, family.ErrRowConfig)
		})
	}
}

// The Hub's Parquet form may hold install_config as a JSON string; the
// row means the same.
func TestRebenchConfigAsString(t *testing.T) {
	inst := loadRows(t, "testdata/rebench/rows.jsonl")[0]
	f, _ := family.Of(inst)
	require.NotNil(t, f)
	want, err := f.TestSpec(inst)
	require.NoError(t, err)
	s, err := json.Marshal(string(inst.Extra["install_config"]))
	require.NoError(t, err)
	inst.Extra = map[string]json.RawMessage{"install_config": s}
	got, err := f.TestSpec(inst)
	require.NoError(t, err)
	assert.Equal(t, want.EvalScript(spec.ScriptOptions{}), got.EvalScript(spec.ScriptOptions{}))
	assert.Equal(t, spec.SourceRow, got.Source)
}
