package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// TestV410JavaScriptScripts compares eval.sh with the scripts official
// v4.1.0 writes for the same rows (testdata/v410, written by upstream's own
// code with generate.py): wp-calypso's test commands derived from its test
// patch by version, and the test patch's image assets downloaded after the
// reset in the JavaScript script.
func TestV410JavaScriptScripts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "v410", "instances.json"))
	require.NoError(t, err)
	var rows []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &rows))
	require.Len(t, rows, 4)
	for _, row := range rows {
		var inst dataset.Instance
		require.NoError(t, json.Unmarshal(row, &inst))
		t.Run(inst.InstanceID, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "v410", inst.InstanceID+".eval.sh"))
			require.NoError(t, err)
			s, err := For(inst, WithRules(harness.V4))
			require.NoError(t, err)
			assert.Equal(t, SourceOfficial, s.Source)
			if inst.Repo == calypsoRepo {
				assert.Equal(t, "calypso", s.Parser)
			}
			assert.Equal(t, string(want), s.EvalScript(ScriptOptions{NoExitCode: true}))
		})
	}
}

func TestCalypsoVersions(t *testing.T) {
	inst := dataset.Instance{InstanceID: "Automattic__wp-calypso-1", Repo: calypsoRepo, Version: "99.0", BaseCommit: "abcd",
		TestPatch: "diff --git a/client/x/test/a.js b/client/x/test/a.js\n--- a/client/x/test/a.js\n+++ b/client/x/test/a.js\n@@ -1 +1 @@\n-a\n+b\n"}
	s, err := For(inst)
	require.NoError(t, err)
	assert.Equal(t, SourceRepoFallback, s.Source)
	assert.Equal(t, "npm run test-client --verbose 'client/x/test/a.js'", s.TestCmd)
	assert.Equal(t, "calypso", s.Parser, "the v4.1.0 table names wp-calypso's parser; it never falls back to pytest")

	inst.TestPatch = "diff --git a/docs/x.md b/docs/x.md\n--- a/docs/x.md\n+++ b/docs/x.md\n@@ -1 +1 @@\n-a\n+b\n"
	s, err = For(inst)
	require.NoError(t, err)
	assert.NotContains(t, s.EvalScript(ScriptOptions{NoExitCode: true}), ": '>>>>> Start Test Output'\n\n",
		"no runnable path: nothing between the markers, as upstream")
}

func TestImageAssetsErrorsWhereRead(t *testing.T) {
	bad := json.RawMessage(`{"test_patch": [{"url": "u"}]}`)
	py := dataset.Instance{InstanceID: "a__b-1", Repo: "a/b", Version: "1", BaseCommit: "abcd", ImageAssets: bad}
	s, err := For(py)
	require.NoError(t, err, "a Python script never reads image_assets")
	assert.Contains(t, strings.Join(s.Notes, "\n"), "image_assets ignored")
	py.EvalScript = "echo"
	_, err = For(py)
	require.ErrorContains(t, err, "field image_assets", "a 5.0.2 row's image_assets are read")
	js := dataset.Instance{InstanceID: "chartjs__Chart.js-1", Repo: "chartjs/Chart.js", Version: "3.5", BaseCommit: "abcd", ImageAssets: bad}
	_, err = For(js)
	require.ErrorContains(t, err, "field image_assets", "v4.1.0's JavaScript script reads them")
}

func TestImageAssets(t *testing.T) {
	type testCase struct {
		name, raw string
		want      ImageAssets
		wantErr   string
	}
	for _, tc := range []testCase{
		{name: "absent"},
		{name: "json string as on the Hub", raw: `"{\"test_patch\": [{\"path\": \"a/b.png\", \"url\": \"u\"}]}"`,
			want: ImageAssets{TestPatch: []ImageAsset{{Path: "a/b.png", URL: "u"}}}},
		{name: "object", raw: `{"patch": [{"path": "c.png", "url": "v"}], "problem_statement": ["x"]}`,
			want: ImageAssets{Patch: []ImageAsset{{Path: "c.png", URL: "v"}}}},
		{name: "entry without path", raw: `{"test_patch": [{"url": "v"}]}`, wantErr: "image_assets: test_patch entry 0 has no path"},
		{name: "not json", raw: `"{"`, wantErr: "field image_assets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseImageAssets("x__y-1", json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
