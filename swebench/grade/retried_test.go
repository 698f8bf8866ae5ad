package grade_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

func TestRunReportRetried(t *testing.T) {
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		t.Run(string(rules), func(t *testing.T) {
			r := grade.BuildRunReport(runInput(rules))
			r.Outcomes = map[string]string{"a__r-1": "resolved"}
			r.FlakyVerdicts = map[string][]string{"a__r-1": {"resolved", "unresolved"}}
			without := r.Encode()
			r.Retried = map[string][]grade.Retry{
				"a__r-2": {{Pod: "swebox-x", Node: "n2", Reason: "NodeUnreachable", Error: "pod swebox-x on node n2 lost: \u00e9"}},
				"a__r-1": {{Pod: "swebox-a", Node: "n2", Reason: "Evicted", Error: "e1"}, {Pod: "swebox-b", Node: "", Reason: "Deleted", Error: "e2"}},
			}
			with := r.Encode()

			head := without[:len(without)-len("\n}\n")]
			require.Equal(t, string(head), string(with[:len(head)]), "the official keys and the other swebox keys are unchanged")
			tail := string(with[len(head):])
			assert.Contains(t, tail, ",\n    \""+grade.RetriedKey+"\": {\n        \"a__r-1\": [\n            {\n                \"pod\": \"swebox-a\",\n                \"node\": \"n2\",\n                \"reason\": \"Evicted\",\n                \"error\": \"e1\"\n            },\n", "one key, last, sorted by id, attempts in order")
			assert.Contains(t, tail, `lost: \u00e9"`, "escaped as json.dumps does")
			var generic map[string]any
			require.NoError(t, json.Unmarshal(with, &generic), "valid JSON")

			var back grade.RunReport
			require.NoError(t, back.UnmarshalJSON(with))
			assert.Equal(t, r.Retried, back.Retried)
			var none grade.RunReport
			require.NoError(t, none.UnmarshalJSON(without))
			assert.Nil(t, none.Retried)

			other := grade.RunReport{Rules: rules, Retried: map[string][]grade.Retry{"b__r-1": {{Pod: "p", Node: "n1", Reason: "Evicted"}}}}
			m, err := grade.MergeRunReports(back, other)
			require.NoError(t, err)
			assert.Len(t, m.Retried, 3, "shards' retries are merged")
		})
	}
}
