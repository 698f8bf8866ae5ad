package hostile_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
)

func rowJSON(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	r := map[string]any{
		"repo": "swebox-test/calc", "instance_id": "calc__calc-1", "base_commit": strings.Repeat("a", 40),
		"patch": "", "test_patch": "", "version": "1.0",
		"FAIL_TO_PASS": `["tests/test_add.py::test_add"]`, "PASS_TO_PASS": `[]`,
	}
	if edit != nil {
		edit(r)
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return string(b)
}

func predJSON(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	p := map[string]any{"instance_id": "calc__calc-1", "model_name_or_path": "org/model", "model_patch": "diff"}
	if edit != nil {
		edit(p)
	}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	return string(b)
}

func set(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
func del(k string) func(map[string]any)        { return func(m map[string]any) { delete(m, k) } }

// TestMalformedInputs: broken dataset and prediction files fail to load with
// an *InputError naming the file, the line and the field, and matching the
// sentinel a caller branches on.
func TestMalformedInputs(t *testing.T) {
	// An object cut off 8 MiB into a string, on one line.
	huge := `{"repo": "` + strings.Repeat("x", 8<<20)
	type testCase struct {
		name        string
		predictions bool // the file is a predictions file
		file        string
		content     func(t *testing.T) string
		line        int
		field       string
		want        error
	}
	cases := []testCase{
		{name: "truncated JSONL row", file: "d.jsonl", line: 2, want: dataset.ErrSyntax,
			content: func(t *testing.T) string {
				r := rowJSON(t, set("instance_id", "calc__calc-2"))
				return rowJSON(t, nil) + "\n" + r[:len(r)/2] + "\n"
			}},
		{name: "truncated JSON array", file: "d.json", want: dataset.ErrSyntax,
			content: func(t *testing.T) string { return "[" + rowJSON(t, nil) + ",\n{\"repo\": " }},
		{name: "wrong type FAIL_TO_PASS", file: "d.jsonl", line: 1, field: "FAIL_TO_PASS", want: dataset.ErrWrongType,
			content: func(t *testing.T) string { return rowJSON(t, set("FAIL_TO_PASS", 42)) + "\n" }},
		{name: "wrong type instance_id", file: "d.jsonl", line: 1, field: "instance_id", want: dataset.ErrWrongType,
			content: func(t *testing.T) string { return rowJSON(t, set("instance_id", []int{1})) + "\n" }},
		{name: "FAIL_TO_PASS string that is no list", file: "d.jsonl", line: 1, field: "FAIL_TO_PASS",
			content: func(t *testing.T) string { return rowJSON(t, set("FAIL_TO_PASS", "[1, 2]")) + "\n" }},
		{name: "missing repo", file: "d.jsonl", line: 3, field: "repo", want: dataset.ErrMissingField,
			content: func(t *testing.T) string {
				return rowJSON(t, nil) + "\n\n" + rowJSON(t, func(m map[string]any) { m["instance_id"] = "calc__calc-3"; delete(m, "repo") }) + "\n"
			}},
		{name: "missing base_commit", file: "d.jsonl", line: 1, field: "base_commit",
			content: func(t *testing.T) string { return rowJSON(t, del("base_commit")) + "\n" }},
		{name: "unsafe instance_id", file: "d.jsonl", line: 1, field: "instance_id", want: dataset.ErrUnsafeName,
			content: func(t *testing.T) string { return rowJSON(t, set("instance_id", "../../x")) + "\n" }},
		{name: "huge garbage line", file: "d.jsonl", line: 2, want: dataset.ErrSyntax,
			content: func(t *testing.T) string { return rowJSON(t, nil) + "\n" + huge + "\n" }},
		{name: "not UTF-8", file: "d.jsonl", line: 1, field: "version", want: dataset.ErrInvalidUTF8,
			content: func(t *testing.T) string { return strings.Replace(rowJSON(t, nil), `"1.0"`, "\"1.0\xff\"", 1) + "\n" }},

		{name: "prediction truncated", predictions: true, file: "p.jsonl", line: 2, want: dataset.ErrSyntax,
			content: func(t *testing.T) string { p := predJSON(t, nil); return p + "\n" + p[:10] }},
		{name: "prediction patch of wrong type", predictions: true, file: "p.jsonl", line: 1, field: "model_patch", want: dataset.ErrWrongType,
			content: func(t *testing.T) string { return predJSON(t, set("model_patch", map[string]int{"a": 1})) + "\n" }},
		{name: "prediction without model", predictions: true, file: "p.jsonl", line: 1, field: "model_name_or_path", want: dataset.ErrMissingField,
			content: func(t *testing.T) string { return predJSON(t, del("model_name_or_path")) + "\n" }},
		{name: "prediction without id", predictions: true, file: "p.json", line: 2, field: "instance_id", want: dataset.ErrMissingField,
			content: func(t *testing.T) string { return "[\n" + predJSON(t, del("instance_id")) + "\n]" }},
		{name: "prediction with NUL in model", predictions: true, file: "p.jsonl", line: 1, field: "model_name_or_path", want: dataset.ErrUnsafeName,
			content: func(t *testing.T) string { return predJSON(t, set("model_name_or_path", "m\x00")) + "\n" }},
		{name: "prediction huge garbage line", predictions: true, file: "p.jsonl", line: 3, want: dataset.ErrSyntax,
			content: func(t *testing.T) string { return predJSON(t, nil) + "\n\n" + huge }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			require.NoError(t, os.WriteFile(path, []byte(tc.content(t)), 0o644))
			var err error
			if tc.predictions {
				_, err = dataset.LoadPredictions(path)
			} else {
				_, err = dataset.LoadDataset(path)
			}
			require.Error(t, err)
			var ie *dataset.InputError
			require.True(t, errors.As(err, &ie), "an *InputError: %v", err)
			assert.Equal(t, path, ie.File)
			if tc.line > 0 {
				assert.Equal(t, tc.line, ie.Line, "%v", err)
			}
			assert.Equal(t, tc.field, ie.Field, "%v", err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want, "%v", err)
			}
			msg := err.Error()
			assert.Contains(t, msg, path)
			assert.Less(t, len(msg), 4096, "the message quotes the input in moderation")
		})
	}
}

// TestHugeValidRow: a long field is data, not an error.
func TestHugeValidRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(rowJSON(t, set("problem_statement", strings.Repeat("p", 16<<20)))+"\n"), 0o644))
	ds, err := dataset.LoadDataset(path)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Len(t, ds[0].ProblemStatement, 16<<20)
}
