package grade_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

func reportJSON(id string, resolved bool) []byte {
	return grade.InstanceReport{InstanceID: id, PatchExists: true, PatchSuccessfullyApplied: true, Resolved: resolved, Rules: harness.V4}.Encode()
}

// runInput is a run over seven dataset instances, one of each fate, plus a
// prediction for an id outside the dataset.
func runInput(rules harness.Rules) grade.RunInput {
	return grade.RunInput{
		Rules:   rules,
		Dataset: []string{"a__r-1", "a__r-2", "a__r-3", "a__r-4", "a__r-5", "a__r-6", "a__r-7", "a__r-8"},
		Predictions: map[string]grade.Prediction{
			"a__r-1": {}, "a__r-2": {}, "a__r-3": {EmptyPatch: true}, "a__r-4": {}, "a__r-5": {},
			"a__r-6": {}, "a__r-7": {}, "z__other-9": {},
		},
		Reports: map[string][]byte{
			"a__r-1": reportJSON("a__r-1", true),
			"a__r-2": reportJSON("a__r-2", false),
			"a__r-5": []byte(" \n "),                                 // empty: error, still completed
			"a__r-6": []byte(`{"a__r-6": {"patch_is_None": false}}`), // no "resolved": error
			"a__r-7": []byte(`{"a__r-7": {"resolved": 1}}`),          // truthy
		},
		FailureReasons: map[string]string{"a__r-2": grade.MissingModule, "a__r-4": grade.ContainerUnavailable, "a__r-1": grade.OutOfMemory},
	}
}

func TestBuildRunReport(t *testing.T) {
	r := grade.BuildRunReport(runInput(harness.V4))
	assert.Equal(t, 8, r.TotalInstances)
	assert.Equal(t, 8, r.SubmittedInstances, "every prediction, also outside the dataset")
	assert.Equal(t, []string{"a__r-1", "a__r-2", "a__r-5", "a__r-6", "a__r-7"}, r.CompletedIDs)
	assert.Equal(t, []string{"a__r-8"}, r.IncompleteIDs)
	assert.Equal(t, []string{"a__r-3"}, r.EmptyPatchIDs)
	assert.Equal(t, []string{"a__r-1", "a__r-7"}, r.ResolvedIDs)
	assert.Equal(t, []string{"a__r-2"}, r.UnresolvedIDs)
	assert.Equal(t, []string{"a__r-4", "a__r-5", "a__r-6"}, r.ErrorIDs)
	assert.Equal(t, []string{"a__r-1", "a__r-2", "a__r-3", "a__r-4", "a__r-5", "a__r-6", "a__r-7", "z__other-9"}, r.SubmittedIDs)
	assert.Equal(t, []int{5, 2, 1, 1, 3}, []int{r.CompletedInstances, r.ResolvedInstances, r.UnresolvedInstances, r.EmptyPatchInstances, r.ErrorInstances})
	assert.Nil(t, r.FailureReasons, "v4 has no failure classification")

	v5 := grade.BuildRunReport(runInput(harness.V5))
	assert.Equal(t, []string{"a__r-4"}, v5.InfraFailureIDs)
	assert.Equal(t, []string{"a__r-2"}, v5.AmbiguousFailureIDs)
	assert.Equal(t, map[string]string{"a__r-2": grade.MissingModule, "a__r-4": grade.ContainerUnavailable}, v5.FailureReasons,
		"a resolved instance gets no failure reason")
	assert.Equal(t, r.ErrorIDs, v5.ErrorIDs, "advisory: the official categories are unchanged")
}

func TestRunReportEncode(t *testing.T) {
	type testCase struct {
		name  string
		rules harness.Rules
		left  *grade.Leftovers
		keys  []string
	}
	v4keys := []string{"total_instances", "submitted_instances", "completed_instances", "resolved_instances",
		"unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids", "incomplete_ids",
		"empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids", "error_ids", "schema_version"}
	v5keys := []string{"total_instances", "submitted_instances", "completed_instances", "resolved_instances",
		"unresolved_instances", "infra_failure_instances", "ambiguous_failure_instances", "empty_patch_instances",
		"error_instances", "completed_ids", "incomplete_ids", "empty_patch_ids", "submitted_ids", "resolved_ids",
		"unresolved_ids", "infra_failure_ids", "ambiguous_failure_ids", "failure_reasons", "error_ids", "schema_version"}
	leftKeys := []string{"unstopped_instances", "unstopped_containers", "unremoved_images"}
	for _, tc := range []testCase{
		{"v4", harness.V4, nil, v4keys},
		{"v5", harness.V5, nil, v5keys},
		{"v5 with leftovers", harness.V5, &grade.Leftovers{Containers: []string{"c2", "c1"}, Images: []string{"i"}}, append(append([]string{}, v5keys...), leftKeys...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := runInput(tc.rules)
			in.Leftovers = tc.left
			out := grade.BuildRunReport(in).Encode()
			assert.Equal(t, tc.keys, topKeys(t, out))
			assert.Equal(t, byte('\n'), out[len(out)-1], "print() adds a newline")
			want := pythonDumps(t, [][]byte{out[:len(out)-1]}, true)
			assert.Equal(t, string(want[0]), string(out), "bytes of Python's print(json.dumps(report, indent=4))")
			var back grade.RunReport
			require.NoError(t, json.Unmarshal(out, &back))
			assert.Equal(t, string(out), string(back.Encode()), "round trip")
		})
	}
}

// topKeys returns the keys of a JSON object in document order.
func topKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytesReader(doc))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestRunReportFileName(t *testing.T) {
	assert.Equal(t, "openai__gpt-4o.run1.json", grade.RunReportFileName("openai/gpt-4o", "run1"))
	assert.Equal(t, "gold.validate.json", grade.RunReportFileName("gold", "validate"))
}

func TestMergeRunReports(t *testing.T) {
	half := func(ids []string, rules harness.Rules) grade.RunReport {
		in := runInput(rules)
		in.Dataset = ids
		preds := map[string]grade.Prediction{}
		for _, id := range ids {
			if p, ok := in.Predictions[id]; ok {
				preds[id] = p
			}
		}
		in.Predictions = preds
		return grade.BuildRunReport(in)
	}
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		t.Run(string(rules), func(t *testing.T) {
			in := runInput(rules)
			delete(in.Predictions, "z__other-9")
			whole := grade.BuildRunReport(in)
			a := half([]string{"a__r-1", "a__r-2", "a__r-3", "a__r-4"}, rules)
			b := half([]string{"a__r-5", "a__r-6", "a__r-7", "a__r-8"}, rules)
			merged, err := grade.MergeRunReports(a, b)
			require.NoError(t, err)
			assert.Equal(t, string(whole.Encode()), string(merged.Encode()))
		})
	}

	a := half([]string{"a__r-1", "a__r-2"}, harness.V4)
	b := half([]string{"a__r-2", "a__r-3"}, harness.V4)
	_, err := grade.MergeRunReports(a, b)
	var overlap *grade.OverlapError
	require.ErrorAs(t, err, &overlap)
	assert.Equal(t, "a__r-2", overlap.ID)
	assert.Equal(t, [2]int{0, 1}, overlap.Shards)

	_, err = grade.MergeRunReports(half([]string{"a__r-1"}, harness.V4), half([]string{"a__r-2"}, harness.V5))
	assert.Error(t, err, "mixed rules")
	_, err = grade.MergeRunReports()
	assert.Error(t, err)
}

// TestRunReportOutcomes: the outcomes are one added key, written last; the
// official keys before it are byte for byte those of a report without it,
// and the key survives reading back and merging.
func TestRunReportOutcomes(t *testing.T) {
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		t.Run(string(rules), func(t *testing.T) {
			r := grade.BuildRunReport(runInput(rules))
			official := r.Encode()
			r.Outcomes = map[string]string{"a__r-2": "unresolved", "a__r-1": "resolved", "a__r-4": "engine_lost"}
			with := r.Encode()

			head := official[:len(official)-len("\n}\n")]
			require.Equal(t, string(head), string(with[:len(head)]), "the official keys are unchanged")
			assert.Equal(t, ",\n    \""+grade.OutcomesKey+"\": {\n        \"a__r-1\": \"resolved\",\n        \"a__r-2\": \"unresolved\",\n        \"a__r-4\": \"engine_lost\"\n    }\n}\n",
				string(with[len(head):]), "one key, last, sorted")

			var back grade.RunReport
			require.NoError(t, back.UnmarshalJSON(with))
			assert.Equal(t, r.Outcomes, back.Outcomes)
			var none grade.RunReport
			require.NoError(t, none.UnmarshalJSON(official))
			assert.Nil(t, none.Outcomes, "an official report has none")

			other := grade.RunReport{Rules: rules, Outcomes: map[string]string{"b__r-1": "timed_out"}}
			m, err := grade.MergeRunReports(back, other)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"a__r-1": "resolved", "a__r-2": "unresolved", "a__r-4": "engine_lost", "b__r-1": "timed_out"}, m.Outcomes)
		})
	}
}
