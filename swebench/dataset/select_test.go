package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	ds := []Instance{{InstanceID: "c"}, {InstanceID: "a"}, {InstanceID: "b"}, {InstanceID: "d"}}
	p := func(id, patch string, line int) Prediction {
		return Prediction{InstanceID: id, ModelNameOrPath: "m", ModelPatch: &patch, Source: Position{File: "p.jsonl", Line: line}}
	}
	type testCase struct {
		name     string
		preds    []Prediction
		ids      []string
		run      []string
		empty    []string
		missing  []string
		total    int
		kinds    []WarningKind
		patchOfA string
		errIDs   []string
		errWhat  string
	}
	tests := []testCase{
		{
			name:  "all instances",
			preds: []Prediction{p("a", "x", 1), p("b", "", 2), p("c", "y", 3)},
			run:   []string{"c", "a"}, empty: []string{"b"}, missing: []string{"d"}, total: 4,
			kinds:    []WarningKind{WarnEmptyPatch, WarnMissingPrediction},
			patchOfA: "x",
		},
		{
			name:  "later duplicate wins",
			preds: []Prediction{p("a", "old", 1), p("a", "new", 2), p("b", "z", 3), p("c", "z", 4), p("d", "z", 5)},
			run:   []string{"c", "a", "b", "d"}, total: 4,
			kinds:    []WarningKind{WarnDuplicatePrediction},
			patchOfA: "new",
		},
		{
			name:  "instance filter",
			preds: []Prediction{p("a", "x", 1), p("b", "y", 2)},
			ids:   []string{"b", "d", "b"},
			run:   []string{"b"}, missing: []string{"d"}, total: 2,
			kinds:    []WarningKind{WarnMissingPrediction},
			patchOfA: "x",
		},
		{
			name:   "unknown instance filter id",
			preds:  []Prediction{p("a", "x", 1)},
			ids:    []string{"zz", "a", "yy"},
			errIDs: []string{"yy", "zz"}, errWhat: "instance",
		},
		{
			name:   "prediction not in dataset",
			preds:  []Prediction{p("a", "x", 1), p("q", "x", 2), p("p", "x", 3)},
			ids:    []string{"a"},
			errIDs: []string{"p", "q"}, errWhat: "prediction",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Select(ds, tc.preds, tc.ids)
			if tc.errIDs != nil {
				var ue *UnknownIDsError
				require.ErrorAs(t, err, &ue)
				assert.ErrorIs(t, err, ErrUnknownIDs)
				assert.Equal(t, tc.errIDs, ue.IDs)
				assert.Equal(t, tc.errWhat, ue.What)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.run, sel.Run)
			assert.Equal(t, tc.empty, sel.EmptyPatch)
			assert.Equal(t, tc.missing, sel.MissingPrediction)
			assert.Len(t, sel.Instances, tc.total)
			assert.Equal(t, "m", sel.Model)
			var kinds []WarningKind
			for _, w := range sel.Warnings {
				kinds = append(kinds, w.Kind)
			}
			assert.Equal(t, tc.kinds, kinds)
			assert.Equal(t, tc.patchOfA, sel.Predictions["a"].Patch())
		})
	}
}

func TestSelectWarnings(t *testing.T) {
	ds := []Instance{{InstanceID: "a"}, {InstanceID: "b"}}
	x := "x"
	preds := []Prediction{
		{InstanceID: "a", ModelNameOrPath: "m1", ModelPatch: &x, IDFromKey: true, Source: Position{"p.json", 2}},
		{InstanceID: "b", ModelNameOrPath: "m2", ModelPatch: &x, KeyMismatch: "bb", Source: Position{"p.json", 3}},
	}
	sel, err := Select(ds, preds, nil)
	require.NoError(t, err)
	require.Len(t, sel.Warnings, 3)
	assert.Equal(t, WarnIDFromKey, sel.Warnings[0].Kind)
	assert.Contains(t, sel.Warnings[0].Message, "p.json:2")
	assert.Equal(t, WarnMixedModels, sel.Warnings[1].Kind)
	assert.Equal(t, WarnKeyMismatch, sel.Warnings[2].Kind)
	assert.Equal(t, "m1", sel.Model)
	in, ok := sel.Instance("b")
	assert.True(t, ok)
	assert.Equal(t, "b", in.InstanceID)
}
