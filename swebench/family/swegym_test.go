package family_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// Every fixture row, read from either SWE-Gym dataset or given the family
// by name, gives its fork's image name, eval script (byte for byte) and
// verdict with its lists, or its parser's exception, under either run
// rule set (the fork grades as 2.0.13 whatever the run's rules).
func TestSWEGymAgreesWithUpstream(t *testing.T) {
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		for _, hub := range []string{"SWE-Gym/SWE-Gym", "SWE-Gym/SWE-Gym-Lite"} {
			agree, total := agreeWithUpstream(t, "testdata/swegym", "swe-gym", hub, rules)
			assert.Equal(t, total, agree)
			t.Logf("SWE-Gym (dataset %q, rules %s): %d of %d fixture rows agree with SWE-Gym/SWE-Bench-Fork at 242429c", hub, rules, agree, total)
		}
	}
}

// The table swebox carries is the fork's, entry for entry: every version
// of every repository the fork adds, with its test command, install step,
// Python, pre_install and eval_commands (specs.json is the fork's own
// MAP_REPO_VERSION_TO_SPECS, dumped by upstream.py).
func TestSWEGymTableIsTheForks(t *testing.T) {
	b, err := os.ReadFile("testdata/swegym/specs.json")
	require.NoError(t, err)
	var want map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &want))
	got, err := json.Marshal(family.SWEGymSpecs())
	require.NoError(t, err)
	var gotJSON map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal(got, &gotJSON))
	assert.Equal(t, want, gotJSON)
	n := 0
	for _, vs := range want {
		n += len(vs)
	}
	assert.Greater(t, n, 500, "the fork's table has some 510 entries")
}

// A row the fork would not run or not grade is refused before anything
// runs: a version its table lacks (KeyError), spyder (a table with no
// version), an instance id whose repository its parser table lacks.
func TestSWEGymRefusesRowsItsHarnessCannotRun(t *testing.T) {
	f, ok := family.Lookup("swe-gym")
	require.True(t, ok)
	base := loadRows(t, "testdata/swegym/rows.jsonl")[0]
	for _, tc := range []struct {
		name, id, repo, version string
		want                    error
	}{
		{"unknown version", "getmoto__moto-1", "getmoto/moto", "9.9", spec.ErrUnknownVersion},
		{"spyder", "spyder-ide__spyder-1", "spyder-ide/spyder", "5.0", spec.ErrUnknownVersion},
		{"id of no parser", "acme__moto-1", "getmoto/moto", "4.1", family.ErrNoParser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := base
			inst.InstanceID, inst.Repo, inst.Version = tc.id, tc.repo, tc.version
			_, err := f.TestSpec(inst)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	// A row of a repository the fork adds nothing for is the official
	// tables' (SWE-Gym's datasets hold none).
	inst := dataset.Instance{InstanceID: "astropy__astropy-12907", Repo: "astropy/astropy", BaseCommit: base.BaseCommit, Version: "4.3"}
	ts, err := f.TestSpec(inst)
	require.NoError(t, err)
	assert.Equal(t, spec.ScriptPython, ts.Script)
}

// gymHubRow is a row of SWE-Gym/SWE-Gym's Parquet export, whose test lists
// are list columns, not JSON strings.
type gymHubRow struct {
	Repo       string   `parquet:"repo"`
	InstanceID string   `parquet:"instance_id"`
	BaseCommit string   `parquet:"base_commit"`
	Patch      string   `parquet:"patch"`
	TestPatch  string   `parquet:"test_patch"`
	Problem    string   `parquet:"problem_statement"`
	Hints      string   `parquet:"hints_text"`
	CreatedAt  string   `parquet:"created_at"`
	Version    string   `parquet:"version"`
	FailToPass []string `parquet:"FAIL_TO_PASS,list"`
	PassToPass []string `parquet:"PASS_TO_PASS,list"`
	EnvCommit  string   `parquet:"environment_setup_commit"`
}

// SWE-Gym's rows, read by the name of either dataset from the Hub's
// Parquet form, are the family's and give the fork's eval scripts, images
// and grading as the JSONL fixtures do.
func TestSWEGymLoadsByHubName(t *testing.T) {
	rows := loadRows(t, "testdata/swegym/rows.jsonl")
	var pq []gymHubRow
	for _, in := range rows {
		pq = append(pq, gymHubRow{in.Repo, in.InstanceID, in.BaseCommit, in.Patch, in.TestPatch, in.ProblemStatement,
			in.HintsText, in.CreatedAt, in.Version, in.FailToPass, in.PassToPass, in.EnvironmentSetupCommit})
	}
	file := parquetBytes(t, pq)
	var expected map[string]upstreamReport
	b, err := os.ReadFile("testdata/swegym/expected.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	for _, name := range []string{"SWE-Gym/SWE-Gym", "SWE-Gym/SWE-Gym-Lite"} {
		t.Run(name, func(t *testing.T) {
			loaded := loadByName(t, name, "train", file)
			require.Len(t, loaded, len(rows))
			for i, in := range loaded {
				assert.Equal(t, rows[i].FailToPass, in.FailToPass)
				f, _, err := family.Resolve(in, family.Hint{Dataset: name})
				require.NoError(t, err)
				require.NotNil(t, f, in.InstanceID)
				require.Equal(t, "swe-gym", f.Name)
				ts, err := f.TestSpec(in, spec.WithNamespace(f.Namespace))
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join("testdata/swegym/expected", in.InstanceID+".eval.sh"))
				require.NoError(t, err)
				assert.Equal(t, string(want), ts.EvalScript(spec.ScriptOptions{NoExitCode: true}), in.InstanceID)
				assert.Equal(t, expected[in.InstanceID].Image, ts.Image)
				assert.Equal(t, family.GradingSWEGym, ts.Grading)
			}
		})
	}
	// Read from a file, the same rows only look like SWE-Gym's.
	f, looksLike, err := family.Resolve(rows[0], family.Hint{Dataset: "rows.jsonl"})
	require.NoError(t, err)
	assert.Nil(t, f)
	require.Len(t, looksLike, 1)
	assert.Equal(t, "swe-gym", looksLike[0].Name)
}
