package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

func TestRunReportFlakyVerdicts(t *testing.T) {
	for _, rules := range []harness.Rules{harness.V4, harness.V5} {
		t.Run(string(rules), func(t *testing.T) {
			r := grade.BuildRunReport(runInput(rules))
			r.Outcomes = map[string]string{"a__r-1": "resolved"}
			without := r.Encode()
			r.FlakyVerdicts = map[string][]string{"a__r-2": {"unresolved", "resolved"}, "a__r-1": {"resolved", "unresolved", "resolved"}}
			with := r.Encode()

			head := without[:len(without)-len("\n}\n")]
			require.Equal(t, string(head), string(with[:len(head)]), "the official keys and swebox_outcomes are unchanged")
			assert.Equal(t, ",\n    \""+grade.FlakyVerdictsKey+"\": {\n        \"a__r-1\": [\n            \"resolved\",\n            \"unresolved\",\n            \"resolved\"\n        ],\n        \"a__r-2\": [\n            \"unresolved\",\n            \"resolved\"\n        ]\n    }\n}\n",
				string(with[len(head):]), "one key, last, sorted by id, runs in order")

			var back grade.RunReport
			require.NoError(t, back.UnmarshalJSON(with))
			assert.Equal(t, r.FlakyVerdicts, back.FlakyVerdicts)
			var none grade.RunReport
			require.NoError(t, none.UnmarshalJSON(without))
			assert.Nil(t, none.FlakyVerdicts)

			other := grade.RunReport{Rules: rules, FlakyVerdicts: map[string][]string{"b__r-1": {"resolved", "unresolved"}}}
			m, err := grade.MergeRunReports(back, other)
			require.NoError(t, err)
			assert.Len(t, m.FlakyVerdicts, 3, "shards' flaky verdicts are merged")
			assert.Equal(t, []string{"resolved", "unresolved"}, m.FlakyVerdicts["b__r-1"])
		})
	}
}
