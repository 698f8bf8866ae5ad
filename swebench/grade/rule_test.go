package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// TestRegisteredRuleGrades: Grade hands an instance whose Grading names a
// registered rule to that rule, refuses a name nobody registered, and
// RegisterRule refuses the empty name, harness's official rule and a second
// registration.
func TestRegisteredRuleGrades(t *testing.T) {
	const name harness.Grading = "test-rule-registered"
	require.False(t, grade.KnownGrading(name))
	var got grade.Input
	grade.RegisterRule(name, func(in grade.Input) (grade.InstanceReport, error) {
		got = in
		return grade.InstanceReport{InstanceID: in.InstanceID, Resolved: true, Notes: grade.Notes{Grading: name}}, nil
	})
	require.True(t, grade.KnownGrading(name))

	in := grade.Input{InstanceID: "o__r-1", Log: "log", Parser: "any", Grading: name, FailToPass: []string{"t"}}
	rep, err := grade.Grade(in)
	require.NoError(t, err)
	assert.Equal(t, in.InstanceID, got.InstanceID)
	assert.Equal(t, in.Log, got.Log)
	assert.True(t, rep.Resolved)
	assert.Equal(t, name, rep.Notes.Grading)

	_, err = grade.Grade(grade.Input{InstanceID: "o__r-1", Grading: "test-rule-unregistered"})
	assert.ErrorIs(t, err, grade.ErrUnknownRules)

	rule := func(grade.Input) (grade.InstanceReport, error) { return grade.InstanceReport{}, nil }
	for _, g := range []harness.Grading{"", harness.GradingSWEBench, name} {
		assert.Panics(t, func() { grade.RegisterRule(g, rule) }, "%q", g)
	}
	assert.Panics(t, func() { grade.RegisterRule("test-rule-nil", nil) })
}
