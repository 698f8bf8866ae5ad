package dataset

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pred(id, model string, patch any) map[string]any {
	m := map[string]any{"instance_id": id, "model_name_or_path": model}
	if patch != "<absent>" {
		m["model_patch"] = patch
	}
	return m
}

func TestLoadPredictions(t *testing.T) {
	type want struct {
		id, model string
		patch     *string
		fromKey   bool
		mismatch  string
		line      int
	}
	s := func(v string) *string { return &v }
	type testCase struct {
		name, file, content string
		want                []want
	}
	tests := []testCase{
		{
			name: "json list", file: "p.json",
			content: "[\n" + jsonLine(t, pred("a-1", "org/model", "diff")) + ",\n" + jsonLine(t, pred("a-2", "org/model", nil)) + "\n]",
			want:    []want{{id: "a-1", model: "org/model", patch: s("diff"), line: 2}, {id: "a-2", model: "org/model", line: 3}},
		},
		{
			name: "jsonl with absent and empty patches", file: "p.jsonl",
			content: jsonLine(t, pred("a-1", "m", "")) + "\n" + jsonLine(t, pred("a-2", "m", "<absent>")) + "\n",
			want:    []want{{id: "a-1", model: "m", patch: s(""), line: 1}, {id: "a-2", model: "m", line: 2}},
		},
		{
			name: "object keyed by id", file: "p.json",
			content: "{\n  \"a-1\": " + jsonLine(t, pred("a-1", "m", "x")) + ",\n  \"a-2\": " + jsonLine(t, without(pred("", "m", "y"), "instance_id")) + ",\n  \"a-3\": " + jsonLine(t, pred("other", "m", "z")) + "\n}",
			want: []want{
				{id: "a-1", model: "m", patch: s("x"), line: 2},
				{id: "a-2", model: "m", patch: s("y"), fromKey: true, line: 3},
				{id: "other", model: "m", patch: s("z"), mismatch: "a-3", line: 4},
			},
		},
		{
			name: "jsonl saved as .json", file: "p.json",
			content: jsonLine(t, pred("a-1", "m", "x")) + "\n" + jsonLine(t, pred("a-2", "m", "y")),
			want:    []want{{id: "a-1", model: "m", patch: s("x"), line: 1}, {id: "a-2", model: "m", patch: s("y"), line: 2}},
		},
		{
			name: "single prediction object", file: "p.json",
			content: jsonLine(t, pred("a-1", "m", "x")),
			want:    []want{{id: "a-1", model: "m", patch: s("x"), line: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), tc.file, tc.content)
			preds, err := LoadPredictions(path)
			require.NoError(t, err)
			var got []want
			for _, p := range preds {
				got = append(got, want{id: p.InstanceID, model: p.ModelNameOrPath, patch: p.ModelPatch, fromKey: p.IDFromKey, mismatch: p.KeyMismatch, line: p.Source.Line})
				assert.Equal(t, path, p.Source.File)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLoadPredictionsErrors(t *testing.T) {
	type testCase struct {
		name, file, content string
		is                  error
		field               string
		line                int
		msg                 string
	}
	tests := []testCase{
		{name: "csv extension", file: "p.csv", content: "x", is: ErrUnsupportedFormat, msg: "FILE: want a .json or .jsonl file"},
		{name: "missing model", file: "p.jsonl", content: jsonLine(t, pred("a", "m", "x")) + "\n" + jsonLine(t, without(pred("b", "m", "x"), "model_name_or_path")),
			is: ErrMissingField, field: "model_name_or_path", line: 2},
		{name: "null model", file: "p.jsonl", content: jsonLine(t, pred("b", "m", "x")) + "\n" + jsonLine(t, with(pred("b", "m", "x"), "model_name_or_path", nil)),
			is: ErrMissingField, field: "model_name_or_path", line: 2},
		{name: "missing instance_id in a list", file: "p.json", content: "[" + jsonLine(t, without(pred("a", "m", "x"), "instance_id")) + "]",
			is: ErrMissingField, field: "instance_id", line: 1},
		{name: "numeric patch", file: "p.jsonl", content: jsonLine(t, pred("a", "m", 3)),
			is: ErrWrongType, field: "model_patch", line: 1, msg: `FILE:1: field "model_patch": want a string, got number`},
		{name: "model name dot-dot", file: "p.jsonl", content: jsonLine(t, pred("a", "..", "x")),
			is: ErrUnsafeName, field: "model_name_or_path", line: 1},
		{name: "instance id with slash", file: "p.jsonl", content: jsonLine(t, pred("a/../../b", "m", "x")),
			is: ErrUnsafeName, field: "instance_id", line: 1},
		{name: "key with slash in keyed form", file: "p.json", content: `{"../x": {"model_name_or_path": "m", "model_patch": "p"}}`,
			is: ErrUnsafeName, field: "instance_id", line: 1},
		{name: "list of strings", file: "p.json", content: "[\n\"a\"\n]", is: ErrWrongType, line: 2, msg: "FILE:2: want a JSON object, got string"},
		{name: "truncated", file: "p.jsonl", content: jsonLine(t, pred("a", "m", "x")) + "\n" + `{"instance_id": "b", "model_`, is: ErrSyntax, line: 2},
		{name: "invalid UTF-8 in patch", file: "p.jsonl", content: `{"instance_id": "a", "model_name_or_path": "m", "model_patch": "caf` + "\xe9" + `"}`,
			is: ErrInvalidUTF8, field: "model_patch", line: 1},
		// Python's json.loads keeps a lone surrogate; the official harness
		// then fails writing patch.diff (UnicodeEncodeError), so the file
		// is refused rather than the patch silently changed.
		{name: "lone low surrogate in patch", file: "p.jsonl", content: jsonLine(t, pred("a", "m", "x")) + "\n" + `{"instance_id": "b", "model_name_or_path": "m", "model_patch": "caf\udce9"}`,
			is: ErrInvalidUTF8, field: "model_patch", line: 2,
			msg: `FILE:2: field "model_patch": lone surrogate escape \udce9 at byte 4 of the value encodes no character, so the patch cannot be written as UTF-8 (the official harness fails the instance with UnicodeEncodeError)`},
		{name: "lone high surrogate in patch", file: "p.json", content: `[{"instance_id": "b", "model_name_or_path": "m", "model_patch": "\\\ud83d\n"}]`,
			is: ErrInvalidUTF8, field: "model_patch", line: 1},
		{name: "reversed pair in patch", file: "p.jsonl", content: `{"instance_id": "b", "model_name_or_path": "m", "model_patch": "\ude00\ud83d"}`,
			is: ErrInvalidUTF8, field: "model_patch", line: 1},
		{name: "JSON list in a .jsonl file", file: "p.jsonl", content: "[" + jsonLine(t, pred("a", "m", "x")) + "]\n", is: ErrWrongType, line: 1,
			msg: "FILE:1: a JSON list in a .jsonl file: JSON Lines hold one object per line; rename the file to .json, or write one object per line"},
		{name: "JSON list over lines in a .jsonl file", file: "p.jsonl", content: "[\n" + jsonLine(t, pred("a", "m", "x")) + "\n]\n", is: ErrWrongType, line: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), tc.file, tc.content)
			_, err := LoadPredictions(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			if tc.msg != "" {
				assert.Equal(t, strings.ReplaceAll(tc.msg, "FILE", path), err.Error())
			}
			if tc.line != 0 {
				var ie *InputError
				require.ErrorAs(t, err, &ie)
				assert.Equal(t, tc.line, ie.Line)
				assert.Equal(t, tc.field, ie.Field)
			}
		})
	}
}

// A missing predictions file is reported as predictions, not as a dataset.
func TestLoadPredictionsMissingFile(t *testing.T) {
	for _, name := range []string{"p.jsonl", "p.json"} {
		path := filepath.Join(t.TempDir(), name)
		_, err := LoadPredictions(path)
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), "predictions: open "+path)
		assert.NotContains(t, err.Error(), "dataset")
	}
}

// A surrogate pair is one character, kept.
func TestLoadPredictionsSurrogatePair(t *testing.T) {
	path := writeFile(t, t.TempDir(), "p.jsonl", `{"instance_id": "a", "model_name_or_path": "m", "model_patch": "\\udce9 \ud83d\ude00"}`)
	preds, err := LoadPredictions(path)
	require.NoError(t, err)
	assert.Equal(t, `\udce9 😀`, *preds[0].ModelPatch, "an escaped backslash before u is no escape")
}

func TestPredictionRoundTrip(t *testing.T) {
	src := `{"instance_id":"a-1","model_name_or_path":"org/m","model_patch":null,"cost":1.5,"notes":"<x>"}`
	var p Prediction
	require.NoError(t, json.Unmarshal([]byte(src), &p))
	assert.True(t, p.EmptyPatch())
	assert.Equal(t, "", p.Patch())
	out, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, src, string(out))
}

func TestGoldPredictions(t *testing.T) {
	ds := []Instance{{InstanceID: "a", Patch: "p1"}, {InstanceID: "b", Patch: ""}}
	gold := GoldPredictions(ds)
	require.Len(t, gold, 2)
	assert.Equal(t, "gold", gold[0].ModelNameOrPath)
	assert.Equal(t, "p1", gold[0].Patch())
	assert.True(t, gold[1].EmptyPatch())
	// The predictions do not alias the dataset.
	ds[0].Patch = "changed"
	assert.Equal(t, "p1", gold[0].Patch())
}
