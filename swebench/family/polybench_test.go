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
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/spec"
)

// polyExpected is one row of testdata/polybench/expected.json: what
// SWE-PolyBench's own code at 9c836c5 gave (regenerate.sh).
type polyExpected struct {
	Image        string   `json:"image"`
	Parser       string   `json:"parser"`
	WithLogs     bool     `json:"with_logs"`
	AllF2PPassed bool     `json:"all_f2p_passed"`
	NoP2PFailed  bool     `json:"no_p2p_failed"`
	Resolved     bool     `json:"resolved"`
	Passed       []string `json:"passed_tests"`
	Failed       []string `json:"failed_tests"`
}

func polyAgree(t *testing.T, rows []dataset.Instance, hubName string) (agree int) {
	t.Helper()
	var expected map[string]polyExpected
	b, err := os.ReadFile("testdata/polybench/expected.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	require.Len(t, expected, len(rows))
	for _, inst := range rows {
		t.Run(inst.InstanceID, func(t *testing.T) {
			want := expected[inst.InstanceID]
			f, _, err := family.Resolve(inst, family.Hint{Dataset: hubName})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, "swe-polybench", f.Name)
			ts, err := f.TestSpec(inst, spec.WithNamespace(f.Namespace))
			require.NoError(t, err)
			ok := assert.Equal(t, want.Image, ts.Image)
			ok = assert.Equal(t, want.Parser, ts.Parser) && ok
			ok = assert.Equal(t, family.GradingPolyBench, ts.Grading) && ok
			var cmd string
			require.NoError(t, json.Unmarshal(inst.Extra["test_command"], &cmd))
			ok = assert.Equal(t, "#!/bin/bash\nset -uxo pipefail\n"+cmd+"\n", ts.EvalScript(spec.ScriptOptions{NoExitCode: true})) && ok

			log, err := os.ReadFile(filepath.Join("testdata/polybench/logs", inst.InstanceID+".log"))
			require.NoError(t, err)
			res, found := family.PolyBenchParse(ts.Parser, string(log))
			require.True(t, found)
			ok = assert.Equal(t, want.WithLogs, res.WithLogs) && ok
			ok = assert.Equal(t, want.Passed, nonNil(res.Passed)) && ok
			ok = assert.Equal(t, want.Failed, nonNil(res.Failed)) && ok
			rep, err := grade.Grade(grade.Input{InstanceID: inst.InstanceID, Log: string(log), Parser: ts.Parser,
				Repo: inst.Repo, FailToPass: ts.FailToPass, PassToPass: ts.PassToPass, Grading: ts.Grading})
			require.NoError(t, err)
			ok = assert.Equal(t, want.Resolved, rep.Resolved) && ok
			ok = assert.Equal(t, family.GradingPolyBench, rep.Notes.Grading) && ok
			if want.WithLogs {
				if assert.NotNil(t, rep.TestsStatus) {
					ok = assert.Equal(t, want.AllF2PPassed, len(rep.TestsStatus.FailToPass.Failure) == 0) && ok
					ok = assert.Equal(t, want.NoP2PFailed, len(rep.TestsStatus.PassToPass.Failure) == 0) && ok
				}
			} else {
				ok = assert.Nil(t, rep.TestsStatus) && ok
			}
			if ok {
				agree++
			}
		})
	}
	return agree
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Every fixture row (Java, JavaScript, TypeScript and Python; each of the
// harness's ten parser classes; passing and failing runs, a build that
// does not compile, a network failure before the tests, a run killed
// mid-report, malformed surefire XML) gives SWE-PolyBench's image name,
// eval script, parsed passed and failed tests, in order, and verdict.
func TestPolyBenchAgreesWithUpstream(t *testing.T) {
	rows := loadRows(t, "testdata/polybench/rows.jsonl")
	classes := map[string]bool{}
	for _, r := range rows {
		classes[family.PolyBenchParserClass[r.Repo]] = true
	}
	assert.Len(t, classes, 10, "the fixtures cover every parser class")
	for _, hub := range []string{"AmazonScience/SWE-PolyBench", "AmazonScience/SWE-PolyBench_500", "AmazonScience/SWE-PolyBench_Verified"} {
		agree := polyAgree(t, rows, hub)
		assert.Equal(t, len(rows), agree)
		t.Logf("SWE-PolyBench (dataset %q): %d of %d fixture rows agree with amazon-science/SWE-PolyBench at 9c836c5", hub, agree, len(rows))
	}
}

// A row's F2P and P2P, Python list literals in the dataset, are its
// FAIL_TO_PASS and PASS_TO_PASS; a row of a repository with no parser
// class, as the harness's ValueError, is refused.
func TestPolyBenchRows(t *testing.T) {
	rows := loadRows(t, "testdata/polybench/rows.jsonl")
	f, _, err := family.Resolve(rows[0], family.Hint{})
	require.NoError(t, err)
	require.NotNil(t, f)
	ts, err := f.TestSpec(rows[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"com.google.gson.FooTest.testA"}, ts.FailToPass)
	assert.Equal(t, []string{"com.google.gson.FooTest.testB", "com.google.gson.FooTest.testC"}, ts.PassToPass)

	var in dataset.Instance
	require.NoError(t, json.Unmarshal([]byte(`{"instance_id":"a__b-1","repo":"google/gson","base_commit":"0123456789abcdef0123456789abcdef01234567",`+
		`"Dockerfile":"FROM x","test_command":"make test","F2P":"['it\\'s', \"q\\\"x\", 'a' 'b']","P2P":"[]"}`), &in))
	ts, err = f.TestSpec(in)
	require.NoError(t, err)
	assert.Equal(t, []string{"it's", `q"x`, "ab"}, ts.FailToPass)
	assert.Empty(t, ts.PassToPass)
	in.Repo = "a/b"
	_, err = f.TestSpec(in)
	assert.ErrorIs(t, err, family.ErrPolyBenchRow)
	in.Repo, in.Extra["F2P"] = "google/gson", json.RawMessage(`"[1, 2]"`)
	_, err = f.TestSpec(in)
	assert.ErrorIs(t, err, family.ErrPolyBenchRow)
}

// polyHubRow is a row of the SWE-PolyBench datasets' Parquet form.
type polyHubRow struct {
	InstanceID    string `parquet:"instance_id"`
	Repo          string `parquet:"repo"`
	BaseCommit    string `parquet:"base_commit"`
	Patch         string `parquet:"patch"`
	TestPatch     string `parquet:"test_patch"`
	Problem       string `parquet:"problem_statement"`
	CreatedAt     string `parquet:"created_at"`
	Language      string `parquet:"language"`
	TaskCategory  string `parquet:"task_category"`
	Dockerfile    string `parquet:"Dockerfile"`
	TestCommand   string `parquet:"test_command"`
	F2P           string `parquet:"F2P"`
	P2P           string `parquet:"P2P"`
	ModifiedNodes string `parquet:"modified_nodes"`
}

// The fixture rows, read by each dataset's Hub name from its Parquet form,
// are the family's and agree with its harness as the JSONL rows do.
func TestPolyBenchLoadsByHubName(t *testing.T) {
	f, err := os.Open("testdata/polybench/rows.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var pq []polyHubRow
	dec := json.NewDecoder(f)
	for dec.More() {
		var m map[string]string
		require.NoError(t, dec.Decode(&m))
		pq = append(pq, polyHubRow{m["instance_id"], m["repo"], m["base_commit"], m["patch"], m["test_patch"],
			m["problem_statement"], m["created_at"], m["language"], m["task_category"], m["Dockerfile"],
			m["test_command"], m["F2P"], m["P2P"], m["modified_nodes"]})
	}
	file := parquetBytes(t, pq)
	for _, name := range []string{"AmazonScience/SWE-PolyBench", "AmazonScience/SWE-PolyBench_500", "AmazonScience/SWE-PolyBench_Verified"} {
		t.Run(name, func(t *testing.T) {
			loaded := loadByName(t, name, "test", file)
			require.Len(t, loaded, len(pq))
			assert.Equal(t, len(loaded), polyAgree(t, loaded, name))
		})
	}
}
