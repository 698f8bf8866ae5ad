package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func fuzzSeeds(f *testing.F) {
	r := map[string]any{"repo": "o/p", "instance_id": "o__p-1", "base_commit": "abcdef12", "FAIL_TO_PASS": `["a"]`, "version": 1.5}
	b, _ := json.Marshal(r)
	f.Add(b)
	f.Add([]byte("[" + string(b) + "]"))
	f.Add([]byte(string(b) + "\n" + string(b)))
	f.Add([]byte(`{"a-1": {"model_name_or_path": "m", "model_patch": null}}`))
	f.Add([]byte(`[{"instance_id": "x", "model_name_or_path": "m/n", "model_patch": "d"}]`))
	f.Add([]byte(`[{"repo": "o/p",`))
	f.Add([]byte("\xEF\xBB\xBF[]"))
	f.Add([]byte(`{"FAIL_TO_PASS": "[1, 2]"}`))
}

// checkResult asserts the invariant of every loader: an error, or records
// that pass the loader's own checks.
func FuzzLoadDataset(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{"d.json", "d.jsonl"} {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, data, 0o644))
			ds, err := LoadDataset(p)
			if err != nil {
				require.Nil(t, ds)
				continue
			}
			require.NoError(t, CheckUniqueIDs(ds))
			for _, in := range ds {
				require.NotEmpty(t, in.InstanceID)
				require.NotEmpty(t, in.Repo)
				require.Regexp(t, hexCommit, in.BaseCommit)
				_, err := SafePathComponent(KindInstanceID, in.InstanceID)
				require.NoError(t, err)
				out, err := json.Marshal(in)
				require.NoError(t, err)
				var again Instance
				require.NoError(t, json.Unmarshal(out, &again), string(out))
				require.Equal(t, in.InstanceID, again.InstanceID)
				require.Equal(t, nilIfEmpty(in.FailToPass), nilIfEmpty(again.FailToPass))
				require.Equal(t, in.Version, again.Version)
			}
		}
	})
}

func FuzzLoadPredictions(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{"p.json", "p.jsonl"} {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, data, 0o644))
			preds, err := LoadPredictions(p)
			if err != nil {
				require.Nil(t, preds)
				continue
			}
			for _, pr := range preds {
				_, err := SafePathComponent(KindInstanceID, pr.InstanceID)
				require.NoError(t, err)
				_, err = SafePathComponent(KindModel, pr.ModelNameOrPath)
				require.NoError(t, err)
			}
			_, _ = Select(nil, preds, nil)
		}
	})
}

func nilIfEmpty(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return l
}
