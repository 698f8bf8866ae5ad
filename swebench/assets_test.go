package swebench_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/harness"
)

// TestImageAssetsStaged runs a 5.0.2 row whose eval_script expects a binary
// asset its text patch cannot carry: the asset is fetched on the host,
// kept in the instance's image_assets/ directory and restored into the
// working tree right before the start marker, as 5.0.2's harness does; an
// asset that cannot be fetched is logged and left out. Under v4 rules
// nothing is staged.
func TestImageAssetsStaged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/expected.png" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("\x89PNG asset-bytes-42\n"))
	}))
	defer srv.Close()
	f := newFixture(t)
	inst := f.dataset[0]
	inst.EvalScript = "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: '>>>>> Start Test Output'\n" +
		"grep -q asset-bytes-42 tests/fixtures/expected.png && echo 'PASSED tests/test_asset.py::test_asset'\n" +
		": '>>>>> End Test Output'\n"
	inst.LogParser, inst.EvalType = "parse_log_pytest", "pass_and_fail"
	inst.FailToPass, inst.PassToPass = []string{"tests/test_asset.py::test_asset"}, nil
	assets, err := json.Marshal(map[string]any{"test_patch": []map[string]string{
		{"path": "tests/fixtures/expected.png", "url": srv.URL + "/expected.png"},
		{"path": "tests/fixtures/missing.png", "url": srv.URL + "/missing.png"},
	}})
	require.NoError(t, err)
	inst.ImageAssets = json.RawMessage(mustJSON(t, string(assets)))

	type testCase struct {
		rules    harness.Rules
		resolved bool
	}
	for _, tc := range []testCase{{harness.V5, true}, {harness.V4, false}} {
		t.Run(string(tc.rules), func(t *testing.T) {
			cfg := f.config(t, "assets", nil)
			cfg.Dataset = append(cfg.Dataset[:0:0], inst)
			cfg.Predictions = append(cfg.Predictions[:0:0], pred(inst.InstanceID, goldPatch))
			cfg.Rules = tc.rules
			res, err := swebench.Evaluate(context.Background(), cfg)
			require.NoError(t, err)
			require.Len(t, res.Instances, 1)
			r := res.Instances[0]
			assert.Equal(t, tc.resolved, r.Status == swebench.StatusResolved, "%s: %s", r.Status, r.Error)
			staged := filepath.Join(r.LogDir, "image_assets", "tests__fixtures__expected.png")
			script, err := os.ReadFile(filepath.Join(r.LogDir, "eval.sh"))
			require.NoError(t, err)
			if !tc.resolved {
				assert.NoFileExists(t, staged)
				assert.NotContains(t, string(script), "cp /testbed/.git/swebox/asset-")
				return
			}
			data, err := os.ReadFile(staged)
			require.NoError(t, err)
			assert.Equal(t, "\x89PNG asset-bytes-42\n", string(data))
			assert.Contains(t, string(script), "mkdir -p $(dirname tests/fixtures/expected.png) && cp /testbed/.git/swebox/asset-tests__fixtures__expected.png tests/fixtures/expected.png\n: '>>>>> Start Test Output'")
			assert.NotContains(t, string(script), "missing.png")
			log, err := os.ReadFile(filepath.Join(r.LogDir, "run_instance.log"))
			require.NoError(t, err)
			assert.Contains(t, string(log), "Could not fetch image asset "+srv.URL+"/missing.png")
		})
	}
}

// mustJSON encodes s as a JSON string, the form image_assets has on the Hub.
func mustJSON(t *testing.T, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return b
}
