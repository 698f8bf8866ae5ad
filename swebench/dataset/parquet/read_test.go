package parquet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
)

// ../testdata/parquet/rows.parquet is rows.jsonl written by Apache Arrow's
// Parquet writer (../testdata/parquetgen): reading either gives the same rows.
func TestReadParquetMatchesJSONL(t *testing.T) {
	want, err := dataset.LoadDataset(filepath.Join("..", "testdata", "parquet", "rows.jsonl"))
	require.NoError(t, err)
	path := filepath.Join("..", "testdata", "parquet", "rows.parquet")
	got, err := dataset.LoadDataset(path)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		assert.Equal(t, dataset.Position{File: path, Line: i + 1}, g.Source, "row number")
		assert.JSONEq(t, string(rawJSON(t, w.Extra)), string(rawJSON(t, g.Extra)), "%s: extra columns", w.InstanceID)
		w.Extra, g.Extra, w.Source, g.Source = nil, nil, dataset.Position{}, dataset.Position{}
		assert.Equal(t, w, g, w.InstanceID)
		wj, err := json.Marshal(w)
		require.NoError(t, err)
		gj, err := json.Marshal(g)
		require.NoError(t, err)
		assert.Equal(t, string(wj), string(gj), "%s: re-serialised row", w.InstanceID)
	}
	// The Hub's form survives: the test lists were JSON-encoded strings.
	f2p, err := json.Marshal(got[0])
	require.NoError(t, err)
	assert.Contains(t, string(f2p), `"FAIL_TO_PASS":"[\"astropy`, "re-serialised as the JSON-encoded string it was")
	assert.Equal(t, []string{"astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]",
		"astropy/modeling/tests/test_separable.py::test_separable[compound_model9-result9]"}, got[0].FailToPass)
	assert.Equal(t, "4.3", got[0].Version)
	assert.Equal(t, "2.0", string(got[0].Extra["score"]), "a float keeps its decimal point, as Python writes it")
	assert.Equal(t, "1234567.0", string(got[2].Extra["score"]))
	assert.Equal(t, dataset.EvalTypeFailOnly, got[2].EvalType)
}

func rawJSON(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestLoadDatasetSplitParquet(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "rows.parquet"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test.parquet"), data, 0o644))
	rows, err := dataset.LoadDatasetSplit(dir, "test")
	require.NoError(t, err)
	assert.Len(t, rows, 3)
	_, err = dataset.LoadDatasetSplit(dir, "dev")
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "found: test")
}

func TestReadParquetBadFiles(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("..", "testdata", "parquet", "rows.parquet"))
	require.NoError(t, err)
	type testCase struct {
		name, data, msg string
	}
	for _, tc := range []testCase{
		{"empty", "", "0 bytes is too short for a Parquet file"},
		{"html", "<html><body>Too Many Requests</body></html>", "no Parquet magic number (PAR1) at both ends"},
		{"footer length beyond the file", "PAR1\x15\x04\x15HPAR1", "footer length 1209336853 exceeds the file (12 bytes)"},
		{"truncated", string(good[:len(good)-100]), "no Parquet magic number"},
		{"damaged footer", string(good[:len(good)-40]) + strings.Repeat("\xff", 32) + string(good[len(good)-8:]), "not a readable Parquet file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := dataset.ReadParquet(strings.NewReader(tc.data), int64(len(tc.data)), "https://hub/x.parquet")
			require.ErrorIs(t, err, dataset.ErrBadParquet)
			assert.Nil(t, rows)
			var ie *dataset.InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "https://hub/x.parquet", ie.File)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// With the reader linked, LoadDataset reads .parquet files and reports a bad
// one as ErrBadParquet, naming the file.
func TestLoadDatasetBadParquet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.parquet")
	require.NoError(t, os.WriteFile(path, []byte("PAR1"), 0o644))
	rows, err := dataset.LoadDataset(path)
	require.ErrorIs(t, err, dataset.ErrBadParquet)
	assert.NotErrorIs(t, err, dataset.ErrUnsupportedFormat)
	assert.Nil(t, rows)
	assert.Equal(t, path+": not a readable Parquet file: 4 bytes is too short for a Parquet file", err.Error())
}
