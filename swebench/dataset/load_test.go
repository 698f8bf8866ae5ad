package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// row returns a valid dataset row as a map the test can modify.
func row(id string) map[string]any {
	return map[string]any{
		"repo":                     "owner/proj",
		"instance_id":              id,
		"base_commit":              commit,
		"patch":                    "diff --git a/x.py b/x.py\n",
		"test_patch":               "diff --git a/tests/test_x.py b/tests/test_x.py\n",
		"problem_statement":        "it breaks",
		"hints_text":               "",
		"created_at":               "2023-01-01T00:00:00Z",
		"version":                  "1.0",
		"FAIL_TO_PASS":             `["tests/test_x.py::test_a"]`,
		"PASS_TO_PASS":             `[]`,
		"environment_setup_commit": commit,
	}
}

func jsonLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func with(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func without(m map[string]any, k string) map[string]any {
	delete(m, k)
	return m
}

func TestLoadDataset(t *testing.T) {
	type testCase struct {
		name  string
		files map[string]string // relative name -> content
		path  string            // relative path to load; "" = the only file
		ids   []string
		check func(t *testing.T, ds []Instance)
	}
	tests := []testCase{
		{
			name:  "jsonl with string lists",
			files: map[string]string{"d.jsonl": jsonLine(t, row("a__b-1")) + "\n" + jsonLine(t, row("a__b-2")) + "\n"},
			ids:   []string{"a__b-1", "a__b-2"},
			check: func(t *testing.T, ds []Instance) {
				assert.Equal(t, []string{"tests/test_x.py::test_a"}, ds[0].FailToPass)
				assert.Empty(t, ds[0].PassToPass)
				assert.Equal(t, "1.0", ds[0].Version)
				assert.Equal(t, 2, ds[1].Source.Line)
			},
		},
		{
			name: "json array with real lists and numeric versions",
			files: map[string]string{"d.json": "[" + jsonLine(t, with(with(row("a-1"), "FAIL_TO_PASS", []string{"t1", "t 2"}), "version", json.RawMessage("3.0"))) + ",\n" +
				jsonLine(t, with(row("a-2"), "version", json.RawMessage("0.10"))) + ",\n" +
				jsonLine(t, with(row("a-3"), "version", json.RawMessage("1"))) + "]"},
			ids: []string{"a-1", "a-2", "a-3"},
			check: func(t *testing.T, ds []Instance) {
				assert.Equal(t, []string{"t1", "t 2"}, ds[0].FailToPass)
				assert.Equal(t, "3.0", ds[0].Version)
				assert.Equal(t, "0.10", ds[1].Version)
				assert.Equal(t, "1", ds[2].Version)
				assert.Equal(t, []int{1, 2, 3}, []int{ds[0].Source.Line, ds[1].Source.Line, ds[2].Source.Line})
			},
		},
		{
			name: "pretty json array",
			files: map[string]string{"d.json": func() string {
				b, _ := json.MarshalIndent([]any{row("p-1"), row("p-2")}, "", "  ")
				return string(b)
			}()},
			ids: []string{"p-1", "p-2"},
			check: func(t *testing.T, ds []Instance) {
				assert.Equal(t, 2, ds[0].Source.Line)
				assert.Greater(t, ds[1].Source.Line, ds[0].Source.Line)
			},
		},
		{
			name:  "jsonl saved as .json",
			files: map[string]string{"d.json": jsonLine(t, row("j-1")) + "\n" + jsonLine(t, row("j-2")) + "\n"},
			ids:   []string{"j-1", "j-2"},
		},
		{
			name:  "BOM, CRLF and blank lines",
			files: map[string]string{"d.jsonl": "\xEF\xBB\xBF" + jsonLine(t, row("c-1")) + "\r\n\r\n  \n" + jsonLine(t, row("c-2")) + "\r\n"},
			ids:   []string{"c-1", "c-2"},
			check: func(t *testing.T, ds []Instance) { assert.Equal(t, 4, ds[1].Source.Line) },
		},
		{
			name: "directory read in name order, other files ignored",
			files: map[string]string{
				"dir/b.jsonl":       jsonLine(t, row("b-1")),
				"dir/a.json":        "[" + jsonLine(t, row("a-1")) + "]",
				"dir/notes.txt":     "ignored",
				"dir/.hidden.jsonl": "garbage",
			},
			path: "dir",
			ids:  []string{"a-1", "b-1"},
		},
		{
			name:  "null optional fields and extra fields",
			files: map[string]string{"d.jsonl": jsonLine(t, with(with(with(row("n-1"), "hints_text", nil), "PASS_TO_PASS", nil), "custom", map[string]int{"x": 1}))},
			ids:   []string{"n-1"},
			check: func(t *testing.T, ds []Instance) {
				assert.Equal(t, "", ds[0].HintsText)
				assert.Nil(t, ds[0].PassToPass)
				assert.JSONEq(t, `{"x":1}`, string(ds[0].Extra["custom"]))
			},
		},
		{
			name:  "v5 fields",
			files: map[string]string{"d.jsonl": jsonLine(t, with(with(with(with(row("v-1"), "image", "img:1"), "eval_script", "#!/bin/bash\n"), "log_parser", "pytest"), "eval_type", "fail_only"))},
			ids:   []string{"v-1"},
			check: func(t *testing.T, ds []Instance) {
				assert.Equal(t, "img:1", ds[0].Image)
				assert.Equal(t, "pytest", ds[0].LogParser)
				assert.Equal(t, EvalTypeFailOnly, ds[0].EvalType)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var only string
			for name, content := range tc.files {
				only = writeFile(t, dir, name, content)
			}
			path := only
			if tc.path != "" {
				path = filepath.Join(dir, tc.path)
			}
			ds, err := LoadDataset(path)
			require.NoError(t, err)
			var ids []string
			for _, in := range ds {
				ids = append(ids, in.InstanceID)
			}
			assert.Equal(t, tc.ids, ids)
			if tc.check != nil {
				tc.check(t, ds)
			}
		})
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	good := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(jsonLine(t, row(fmt.Sprintf("g-%d", i))) + "\n")
		}
		return b.String()
	}
	pretty := func(rows ...any) string {
		b, _ := json.MarshalIndent(rows, "", "  ")
		return string(b)
	}
	type testCase struct {
		name    string
		file    string
		content string
		is      error
		msg     string // exact error text, with "FILE" standing for the path
		field   string
		line    int
	}
	tests := []testCase{
		{
			name: "wrong list type on line 17", file: "data.jsonl",
			content: good(16) + jsonLine(t, with(row("bad"), "FAIL_TO_PASS", 5)) + "\n",
			is:      ErrWrongType, field: "FAIL_TO_PASS", line: 17,
			msg: `FILE:17: field "FAIL_TO_PASS": want a list of strings or a JSON-encoded list, got number`,
		},
		{
			name: "string that is not a list", file: "data.jsonl",
			content: jsonLine(t, with(row("bad"), "PASS_TO_PASS", "test_a")),
			is:      ErrWrongType, field: "PASS_TO_PASS", line: 1,
		},
		{
			name: "list with a number", file: "data.jsonl",
			content: jsonLine(t, with(row("bad"), "PASS_TO_PASS", []any{"a", 1})),
			is:      ErrWrongType, field: "PASS_TO_PASS", line: 1,
			msg: `FILE:1: field "PASS_TO_PASS": want a list of strings or a JSON-encoded list: element 1 is number`,
		},
		{
			name: "missing instance_id", file: "data.jsonl",
			content: good(2) + jsonLine(t, without(row("x"), "instance_id")),
			is:      ErrMissingField, field: "instance_id", line: 3,
		},
		{
			name: "missing repo", file: "data.jsonl", content: jsonLine(t, without(row("x"), "repo")),
			is: ErrMissingField, field: "repo", line: 1,
		},
		{
			name: "missing base_commit", file: "data.jsonl", content: jsonLine(t, with(row("x"), "base_commit", nil)),
			is: ErrMissingField, field: "base_commit", line: 1,
		},
		{
			name: "base_commit with shell metacharacters", file: "data.jsonl", content: jsonLine(t, with(row("x"), "base_commit", "abc; rm -rf /")),
			is: ErrWrongType, field: "base_commit", line: 1,
		},
		{
			name: "repo without owner", file: "data.jsonl", content: jsonLine(t, with(row("x"), "repo", "proj")),
			is: ErrWrongType, field: "repo", line: 1,
		},
		{
			name: "version object", file: "data.jsonl", content: jsonLine(t, with(row("x"), "version", map[string]int{})),
			is: ErrWrongType, field: "version", line: 1,
			msg: `FILE:1: field "version": want a string or a number, got object`,
		},
		{
			name: "patch number", file: "data.jsonl", content: jsonLine(t, with(row("x"), "patch", 3)),
			is: ErrWrongType, field: "patch", line: 1,
			msg: `FILE:1: field "patch": want a string, got number`,
		},
		{
			name: "bad eval_type", file: "data.jsonl", content: jsonLine(t, with(row("x"), "eval_type", "both")),
			is: ErrWrongType, field: "eval_type", line: 1,
		},
		{
			name: "row not an object", file: "data.json", content: "[\n" + jsonLine(t, row("a")) + ",\n\"text\"\n]",
			is: ErrWrongType, line: 3, msg: `FILE:3: want a JSON object, got string`,
		},
		{
			name: "jsonl line of plain words", file: "data.jsonl", content: good(1) + "not json at all\n",
			is: ErrWrongType, line: 2, msg: `FILE:2: want a JSON object, got invalid JSON`,
		},
		{
			name: "truncated jsonl line", file: "data.jsonl", content: good(3) + `{"repo": "a/b", "instance_id": "x`,
			is: ErrSyntax, line: 4,
		},
		{
			name: "truncated json array", file: "data.json", content: "[\n" + jsonLine(t, row("a")) + ",\n" + `{"repo": "a/b",` + "\n",
			is: ErrSyntax, line: 3,
		},
		{
			name: "syntax error in the middle of a pretty array", file: "data.json", content: "[\n{\n\"repo\": \"a/b\",\n\"instance_id\": x\n}\n]",
			is: ErrSyntax, line: 4,
		},
		{
			name: "field line inside a pretty array", file: "data.json",
			content: pretty(row("a"), with(row("b"), "FAIL_TO_PASS", true)),
			is:      ErrWrongType, field: "FAIL_TO_PASS",
			line: 2 + len(row("a")) + 2 + 1, // "[", the first object's lines, "},{"... computed below
		},
		{
			name: "invalid UTF-8 in a field", file: "data.jsonl",
			content: strings.Replace(jsonLine(t, with(row("x"), "patch", "PLACEHOLDER")), "PLACEHOLDER", "caf\xe9", 1),
			is:      ErrInvalidUTF8, field: "patch", line: 1,
		},
		{
			name: "unsafe instance id", file: "data.jsonl", content: jsonLine(t, row("../etc")),
			is: ErrUnsafeName, field: "instance_id", line: 1,
		},
		{
			name: "duplicate id", file: "data.jsonl", content: good(1) + jsonLine(t, row("g-1")),
			is: ErrDuplicateID, field: "instance_id", line: 2,
			msg: `FILE:2: field "instance_id": instance id "g-1" appears twice (also at FILE:1)`,
		},
		{
			name: "ids differing only in case", file: "data.jsonl", content: jsonLine(t, row("Django__x-1")) + "\n" + jsonLine(t, row("django__X-1")),
			is: ErrDuplicateID, field: "instance_id", line: 2,
			msg: `FILE:2: field "instance_id": instance ids "django__X-1" and "Django__x-1" (at FILE:1) differ only in letter case`,
		},
		{
			name: "unknown extension", file: "data.csv", content: "a,b", is: ErrUnsupportedFormat,
		},
		{
			// This test binary does not link package dataset/parquet.
			name: "parquet file without the reader linked", file: "data.parquet", content: "PAR1", is: ErrUnsupportedFormat,
			msg: `FILE: this program cannot read Parquet: it does not link the Parquet reader (import _ "` + ParquetImport + `")`,
		},
		{
			name: "empty json", file: "data.json", content: "  \n", is: ErrSyntax,
		},
		{
			name: "trailing garbage after array", file: "data.json", content: "[" + jsonLine(t, row("a")) + "]\n]", is: ErrSyntax, line: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), tc.file, tc.content)
			_, err := LoadDataset(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			if tc.msg != "" {
				assert.Equal(t, strings.ReplaceAll(tc.msg, "FILE", path), err.Error())
			}
			var ie *InputError
			if tc.line != 0 || tc.field != "" {
				require.ErrorAs(t, err, &ie)
				assert.Equal(t, path, ie.File)
				assert.Equal(t, tc.field, ie.Field)
				if tc.name == "field line inside a pretty array" {
					// The offending member's own line in the pretty-printed file.
					lines := strings.Split(tc.content, "\n")
					want := 0
					for i, l := range lines {
						if strings.Contains(l, `"FAIL_TO_PASS": true`) {
							want = i + 1
						}
					}
					require.NotZero(t, want)
					assert.Equal(t, want, ie.Line)
				} else {
					assert.Equal(t, tc.line, ie.Line)
				}
			}
		})
	}
}

func TestLoadDatasetReportsSeveralErrors(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		b.WriteString(jsonLine(t, without(row(fmt.Sprintf("x-%d", i)), "repo")) + "\n")
	}
	path := writeFile(t, t.TempDir(), "d.jsonl", b.String())
	_, err := LoadDataset(path)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, path+":1: field \"repo\"")
	assert.Contains(t, msg, path+":20: field \"repo\"")
	assert.NotContains(t, msg, path+":21:")
	assert.Contains(t, msg, "(stopped after 20 errors)")
}

func TestLoadDatasetHuggingFace(t *testing.T) {
	type testCase struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string
	}
	tests := []testCase{
		{"alias", func(t *testing.T, dir string) string { return "lite" }, `load_dataset("SWE-bench/SWE-bench_Lite"`},
		{"hub name", func(t *testing.T, dir string) string { return "princeton-nlp/SWE-bench_Verified" }, `load_dataset("princeton-nlp/SWE-bench_Verified"`},
		{"save_to_disk dir", func(t *testing.T, dir string) string {
			writeFile(t, dir, "ds/dataset_info.json", "{}")
			writeFile(t, dir, "ds/data-00000-of-00001.arrow", "x")
			return filepath.Join(dir, "ds")
		}, "save_to_disk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDataset(tc.setup(t, t.TempDir()))
			require.ErrorIs(t, err, ErrUnsupportedFormat)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), ".jsonl")
		})
	}
	t.Run("missing local file", func(t *testing.T) {
		_, err := LoadDataset(filepath.Join(t.TempDir(), "nope.jsonl"))
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.NotErrorIs(t, err, ErrUnsupportedFormat)
	})
}

func TestLoadDatasetSplit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "test.jsonl", jsonLine(t, row("t-1")))
	writeFile(t, dir, "dev.json", "["+jsonLine(t, row("d-1"))+"]")
	writeFile(t, dir, "train/part-0.jsonl", jsonLine(t, row("tr-1")))
	type testCase struct {
		name, path, split string
		want              []string
		errContains       string
	}
	tests := []testCase{
		{name: "jsonl split", path: dir, split: "test", want: []string{"t-1"}},
		{name: "json split", path: dir, split: "dev", want: []string{"d-1"}},
		{name: "split directory", path: dir, split: "train", want: []string{"tr-1"}},
		{name: "file ignores split", path: filepath.Join(dir, "test.jsonl"), split: "dev", want: []string{"t-1"}},
		{name: "missing split", path: dir, split: "validation", errContains: "found: dev, test, train"},
		{name: "bad split name", path: dir, split: "../x", errContains: "not a split name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadDatasetSplit(tc.path, tc.split)
			if tc.errContains != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errContains)
				return
			}
			require.NoError(t, err)
			var ids []string
			for _, in := range ds {
				ids = append(ids, in.InstanceID)
			}
			assert.Equal(t, tc.want, ids)
		})
	}
}

func TestLoadDatasetHugeLine(t *testing.T) {
	// 8 MiB patch on one JSONL line: no scanner limit.
	big := strings.Repeat("+x = 1\n", 8<<20/7)
	path := writeFile(t, t.TempDir(), "big.jsonl", jsonLine(t, row("small"))+"\n"+jsonLine(t, with(row("big"), "patch", big))+"\n")
	ds, err := LoadDataset(path)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	assert.Equal(t, big, ds[1].Patch)
}

func TestInstanceRoundTrip(t *testing.T) {
	type testCase struct {
		name string
		in   map[string]any
	}
	tests := []testCase{
		{"string lists and string version", row("r-1")},
		{"real lists, numeric version, extras", with(with(with(row("r-2"), "FAIL_TO_PASS", []string{"a", "b <c> & d"}), "version", json.RawMessage("0.10")), "zz_extra", []int{1, 2})},
		{"v5 fields and image_assets string", with(with(with(row("r-3"), "image", "i:1"), "image_assets", `{"a": "b"}`), "difficulty", "<15 min fix")},
		{"numeric created_at", with(row("r-4"), "created_at", json.RawMessage("1700000000000"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := jsonLine(t, tc.in)
			var in Instance
			require.NoError(t, json.Unmarshal([]byte(src), &in))
			out, err := json.Marshal(in)
			require.NoError(t, err)
			assert.JSONEq(t, src, string(out))
			// And a second round trip is stable byte for byte.
			var again Instance
			require.NoError(t, json.Unmarshal(out, &again))
			out2, err := json.Marshal(again)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(out2))
		})
	}
}

func TestInstanceMarshalOrder(t *testing.T) {
	in := Instance{Repo: "o/p", InstanceID: "o__p-1", BaseCommit: commit, Patch: "a<b>&c", Version: "1.0", FailToPass: []string{"t"}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(in))
	out := bytes.TrimSpace(buf.Bytes())
	assert.Equal(t, `{"repo":"o/p","instance_id":"o__p-1","base_commit":"`+commit+`","patch":"a<b>&c","test_patch":"","problem_statement":"","hints_text":"","created_at":"","version":"1.0","FAIL_TO_PASS":["t"],"PASS_TO_PASS":[],"environment_setup_commit":""}`, string(out))
	assert.True(t, bytes.HasPrefix(out, []byte(`{"repo"`)))
}

func TestInstanceUnmarshalError(t *testing.T) {
	var in Instance
	err := json.Unmarshal([]byte(jsonLine(t, with(row("x"), "FAIL_TO_PASS", 1))), &in)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrWrongType))
	assert.Contains(t, err.Error(), `field "FAIL_TO_PASS"`)
}

// Without package dataset/parquet linked (this test binary does not link
// it), ReadParquet says which import adds the reader.
func TestReadParquetWithoutTheReader(t *testing.T) {
	require.Nil(t, registeredParquet(), "this test binary must not link "+ParquetImport)
	rows, err := ReadParquet(strings.NewReader("PAR1"), 4, "x.parquet")
	assert.Nil(t, rows)
	require.ErrorIs(t, err, ErrUnsupportedFormat)
	assert.NotErrorIs(t, err, ErrBadParquet)
	assert.Contains(t, err.Error(), `x.parquet: this program cannot read Parquet`)
	assert.Contains(t, err.Error(), `import _ "github.com/swebox/swebox/swebench/dataset/parquet"`)
}
