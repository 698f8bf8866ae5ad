package grade_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// The run report names, for each instance graded by a rule other than the
// official one, that rule, read from its report.json; it survives a
// round trip and a merge of shards, and an all-official run has no key.
func TestRunReportNamesFamilyGradings(t *testing.T) {
	live := grade.InstanceReport{InstanceID: "a", PatchExists: true, PatchSuccessfullyApplied: true, Resolved: true,
		TestsStatus: &grade.TestsStatus{}, Notes: grade.Notes{Grading: harness.Grading("swe-bench-live")}}
	official := grade.InstanceReport{InstanceID: "b", PatchExists: true, PatchSuccessfullyApplied: true,
		TestsStatus: &grade.TestsStatus{}}
	in := grade.RunInput{Rules: harness.V4, Dataset: []string{"a", "b"},
		Predictions: map[string]grade.Prediction{"a": {}, "b": {}},
		Reports:     map[string][]byte{"a": live.Encode(), "b": official.Encode()}}
	r := grade.BuildRunReport(in)
	assert.Equal(t, map[string]string{"a": string(harness.Grading("swe-bench-live"))}, r.Gradings)

	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Encode(), &raw))
	assert.JSONEq(t, `{"a": "swe-bench-live"}`, string(raw[grade.GradingsKey]))
	var back grade.RunReport
	require.NoError(t, json.Unmarshal(r.Encode(), &back))
	assert.Equal(t, r.Gradings, back.Gradings)

	officialA := live
	officialA.Notes = grade.Notes{}
	in.Reports = map[string][]byte{"a": officialA.Encode(), "b": official.Encode()}
	plain := grade.BuildRunReport(in)
	assert.Nil(t, plain.Gradings)
	assert.Equal(t, 2, plain.CompletedInstances)
	raw = nil
	require.NoError(t, json.Unmarshal(plain.Encode(), &raw))
	assert.NotContains(t, raw, grade.GradingsKey)

	other := official
	other.InstanceID = "c"
	shard := grade.BuildRunReport(grade.RunInput{Rules: harness.V4, Dataset: []string{"c"},
		Predictions: map[string]grade.Prediction{"c": {}}, Reports: map[string][]byte{"c": other.Encode()}})
	merged, err := grade.MergeRunReports(r, shard)
	require.NoError(t, err)
	assert.Equal(t, r.Gradings, merged.Gradings)
}

// Environment notes (an install step that failed without the network)
// reach the run report under swebox_environment by id, through
// report.json, a round trip and a merge of shards; a run without any has
// no key.
func TestRunReportCarriesEnvironmentNotes(t *testing.T) {
	note := "the install step failed without network"
	noted := grade.InstanceReport{InstanceID: "a", PatchExists: true, PatchSuccessfullyApplied: true, Resolved: true,
		TestsStatus: &grade.TestsStatus{}, Notes: grade.Notes{Environment: []string{note}}}
	var back grade.InstanceReport
	require.NoError(t, json.Unmarshal(noted.Encode(), &back))
	assert.Equal(t, []string{note}, back.Notes.Environment, "report.json keeps the note")

	plain := grade.InstanceReport{InstanceID: "b", PatchExists: true, PatchSuccessfullyApplied: true, TestsStatus: &grade.TestsStatus{}}
	in := grade.RunInput{Rules: harness.V4, Dataset: []string{"a", "b"},
		Predictions: map[string]grade.Prediction{"a": {}, "b": {}},
		Reports:     map[string][]byte{"a": noted.Encode(), "b": plain.Encode()}}
	r := grade.BuildRunReport(in)
	assert.Equal(t, map[string][]string{"a": {note}}, r.Environment)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Encode(), &raw))
	assert.JSONEq(t, `{"a": ["`+note+`"]}`, string(raw[grade.EnvironmentKey]))
	var run grade.RunReport
	require.NoError(t, json.Unmarshal(r.Encode(), &run))
	assert.Equal(t, r.Environment, run.Environment)

	other := plain
	other.InstanceID = "c"
	shard := grade.BuildRunReport(grade.RunInput{Rules: harness.V4, Dataset: []string{"c"},
		Predictions: map[string]grade.Prediction{"c": {}}, Reports: map[string][]byte{"c": other.Encode()}})
	assert.Nil(t, shard.Environment)
	assert.Equal(t, 1, shard.CompletedInstances)
	raw = nil
	require.NoError(t, json.Unmarshal(shard.Encode(), &raw))
	assert.NotContains(t, raw, grade.EnvironmentKey)
	merged, err := grade.MergeRunReports(r, shard)
	require.NoError(t, err)
	assert.Equal(t, r.Environment, merged.Environment)
}
