package dataset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSafePathComponent(t *testing.T) {
	type testCase struct {
		name, kind, in, want, reason string
	}
	tests := []testCase{
		{name: "instance id", kind: KindInstanceID, in: "django__django-11099", want: "django__django-11099"},
		{name: "model with slash", kind: KindModel, in: "org/model-v1", want: "org__model-v1"},
		{name: "model path with dots", kind: KindModel, in: "../../etc", want: "..__..__etc"},
		{name: "unicode", kind: KindRunID, in: "run-é", want: "run-é"},
		{name: "empty", kind: KindRunID, in: "", reason: "empty"},
		{name: "dot", kind: KindRunID, in: ".", reason: "relative directory"},
		{name: "dot dot", kind: KindInstanceID, in: "..", reason: "relative directory"},
		{name: "slash in id", kind: KindInstanceID, in: "a/b", reason: "path separator"},
		{name: "absolute", kind: KindRunID, in: "/etc", reason: "path separator"},
		{name: "backslash", kind: KindModel, in: `a\b`, reason: "path separator"},
		{name: "NUL", kind: KindInstanceID, in: "a\x00b", reason: "NUL"},
		{name: "newline", kind: KindRunID, in: "a\nb", reason: "control character"},
		{name: "DEL", kind: KindRunID, in: "a\x7fb", reason: "control character"},
		{name: "C1 control", kind: KindRunID, in: "a\u0085b", reason: "control character"},
		{name: "invalid UTF-8", kind: KindRunID, in: "a\xffb", reason: "UTF-8"},
		{name: "too long", kind: KindInstanceID, in: strings.Repeat("x", 201), reason: "longer than 200"},
		{name: "longest allowed", kind: KindInstanceID, in: strings.Repeat("x", 200), want: strings.Repeat("x", 200)},
		{name: "model too long after replacement", kind: KindModel, in: strings.Repeat("a/", 100), reason: "longer than 200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SafePathComponent(tc.kind, tc.in)
			if tc.reason != "" {
				require.ErrorIs(t, err, ErrUnsafeName)
				var ue *UnsafeNameError
				require.ErrorAs(t, err, &ue)
				assert.Contains(t, ue.Reason, tc.reason)
				assert.Equal(t, tc.kind, ue.Kind)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCheckUniqueIDs(t *testing.T) {
	type testCase struct {
		name string
		ids  []string
		err  string
	}
	tests := []testCase{
		{name: "distinct", ids: []string{"a-1", "a-2", "b-1"}},
		{name: "exact duplicate", ids: []string{"a-1", "b", "a-1"}, err: `instance id "a-1" appears twice`},
		{name: "case only", ids: []string{"Repo__x-1", "repo__x-1"}, err: `instance ids "repo__x-1" and "Repo__x-1"`},
		{name: "unicode case", ids: []string{"straße-1", "STRASSE-1", "Straße-1"}, err: `"Straße-1" and "straße-1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ds []Instance
			for i, id := range tc.ids {
				ds = append(ds, Instance{InstanceID: id, Source: Position{"d.jsonl", i + 1}})
			}
			err := CheckUniqueIDs(ds)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrDuplicateID)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}
