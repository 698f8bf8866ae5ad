package family_test

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
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/spec"
)

type multiSWEExpected struct {
	Verdict string              `json:"verdict"`
	Reason  *string             `json:"reason"`
	Fix     map[string][]string `json:"fix"`
	Report  map[string][]string `json:"report"`
	FixRun  string              `json:"fix_run"`
	Image   string              `json:"image"`
	// How run_instance runs the row.
	Command   string   `json:"command"`
	PatchPath string   `json:"patch_path"`
	Workdir   string   `json:"workdir"`
	User      string   `json:"user"`
	HomeFiles []string `json:"home_files"`
}

func loadMultiSWE(t *testing.T) ([]dataset.Instance, map[string]multiSWEExpected) {
	t.Helper()
	rows, err := dataset.LoadDataset("testdata/multiswe/rows.jsonl")
	require.NoError(t, err)
	raw, err := os.ReadFile("testdata/multiswe/expected.json")
	require.NoError(t, err)
	var want map[string]multiSWEExpected
	require.NoError(t, json.Unmarshal(raw, &want))
	require.Len(t, rows, len(want))
	return rows, want
}

// Multi-SWE-bench's own harness (expected.json, regenerate.sh at
// family.MultiSWECommit) and swebox agree on every fixture row: the image,
// the fix-run.sh of the row's class, the class's parse of the log, the
// report's test lists and the verdict (resolved, unresolved with the same
// reason, or an error where the harness records one: a log parse_log
// refuses, a missing log).
func TestMultiSWEAgreesWithItsHarness(t *testing.T) {
	rows, want := loadMultiSWE(t)
	agree := 0
	for _, in := range rows {
		t.Run(in.InstanceID, func(t *testing.T) {
			w, ok := want[in.InstanceID]
			require.True(t, ok, "no expected verdict")
			f, _, err := family.Resolve(in, family.Hint{})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, "multi-swe-bench", f.Name)
			assert.Equal(t, w.Image, f.ImageName(in, f.Namespace, "latest"))
			r, err := family.MultiSWERowOf(in)
			require.NoError(t, err)
			c, err := family.MultiSWEClassOf(r)
			require.NoError(t, err)
			assert.Equal(t, w.FixRun, c.FixRunScript(r))

			log, err := os.ReadFile(filepath.Join("testdata/multiswe/logs", in.InstanceID+".log"))
			if errors.Is(err, os.ErrNotExist) {
				require.Equal(t, "error", w.Verdict, "the harness errors without a fix-run log")
				agree++
				return
			}
			require.NoError(t, err)
			v, fix, err := family.MultiSWEGradeLog(r, string(log))
			if w.Verdict == "error" {
				require.Error(t, err)
				agree++
				return
			}
			require.NoError(t, err)
			assert.Equal(t, w.Fix["passed"], fix.Passed)
			assert.Equal(t, w.Fix["failed"], fix.Failed)
			assert.Equal(t, w.Fix["skipped"], fix.Skipped)
			assert.Equal(t, w.Verdict == "resolved", v.Resolved)
			require.NotNil(t, w.Reason)
			assert.Equal(t, *w.Reason, v.Reason)
			for kind, got := range map[string][]string{"fixed": v.Fixed, "f2p": v.F2P, "p2p": v.P2P, "s2p": v.S2P, "n2p": v.N2P} {
				assert.Equal(t, w.Report[kind], got, kind)
			}
			if !t.Failed() {
				agree++
			}
		})
	}
	assert.Equal(t, len(rows), agree, "rows agreeing with Multi-SWE-bench's harness")
	verdicts := map[string]int{}
	for _, w := range want {
		verdicts[w.Verdict]++
	}
	// The fixtures cover each outcome.
	assert.Positive(t, verdicts["resolved"])
	assert.Positive(t, verdicts["unresolved"])
	assert.Positive(t, verdicts["error"])
}

// A row of Multi-SWE-bench's schema loads as a row of the family (repo
// org/repo, instance id org__repo-N, base_commit base.sha, the gold patch
// from fix_patch) and round-trips through MarshalJSON.
func TestMultiSWERowsLoad(t *testing.T) {
	rows, _ := loadMultiSWE(t)
	in := rows[0]
	assert.Equal(t, "alibaba/fastjson2", in.Repo)
	assert.Equal(t, "alibaba__fastjson2-2001", in.InstanceID)
	assert.Equal(t, strings.Repeat("0", 40-len("f6e1b3")), in.BaseCommit[:40-len("f6e1b3")])
	assert.Equal(t, "diff --git a/f b/f\n", in.Patch)
	assert.Equal(t, []string{"com.alibaba.fastjson2.issues.Issue2001"}, in.FailToPass)
	assert.Equal(t, []string{"com.alibaba.fastjson2.JSONTest"}, in.PassToPass)
	out, err := json.Marshal(in)
	require.NoError(t, err)
	var back dataset.Instance
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, in.InstanceID, back.InstanceID)
	r1, err := family.MultiSWERowOf(in)
	require.NoError(t, err)
	r2, err := family.MultiSWERowOf(back)
	require.NoError(t, err)
	assert.Equal(t, r1, r2)
}

// A row of a repository whose class is not ported, or of a tagged variant
// of a ported one, is refused by the class name Multi-SWE-bench would look
// up; so is a malformed row, at load.
func TestMultiSWERefusals(t *testing.T) {
	base := `{"org":"google","repo":"gson","number":12,"base":{"label":"","ref":"main","sha":"abc123"},"fix_patch":"","test_patch":"",` +
		`"f2p_tests":{},"p2p_tests":{},"s2p_tests":{},"n2p_tests":{},` +
		`"run_result":{"passed_count":0,"failed_count":0,"skipped_count":0,"passed_tests":[],"failed_tests":[],"skipped_tests":[]},` +
		`"test_patch_result":{"passed_count":0,"failed_count":0,"skipped_count":0,"passed_tests":[],"failed_tests":[],"skipped_tests":[]}`
	type testCase struct {
		name, row, wantClass string
	}
	for _, tc := range []testCase{
		{"unported repository", base + `}`, "google/gson"},
		{"tagged variant", strings.Replace(base, `"google","repo":"gson"`, `"cli","repo":"cli"`, 1) + `,"tag":"v1.2"}`, "cli/cli_v1_2"},
		{"number interval", strings.Replace(base, `"google","repo":"gson"`, `"cli","repo":"cli"`, 1) + `,"number_interval":"cli_10_to_1"}`, "cli/cli_10_to_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in dataset.Instance
			require.NoError(t, json.Unmarshal([]byte(tc.row), &in))
			f, _, err := family.Resolve(in, family.Hint{})
			require.NoError(t, err)
			require.NotNil(t, f)
			_, err = f.TestSpec(in)
			require.ErrorIs(t, err, family.ErrMultiSWERepo)
			assert.Contains(t, err.Error(), tc.wantClass)
		})
	}
	var in dataset.Instance
	require.ErrorIs(t, json.Unmarshal([]byte(strings.Replace(base, `"sha":"abc123"`, `"sha":""`, 1)+`}`), &in), family.ErrMultiSWERow)
	require.ErrorIs(t, json.Unmarshal([]byte(strings.Replace(base, `"passed_count":0,"failed_count":0`, `"passed_count":2,"failed_count":0`, 1)+`}`), &in), family.ErrMultiSWERow)
}

// The ported classes span the languages Multi-SWE-bench covers.
func TestMultiSWELanguages(t *testing.T) {
	langs := map[string]bool{}
	for _, name := range family.MultiSWERepos() {
		org, repo, _ := strings.Cut(name, "/")
		r := family.MultiSWERow{Org: org, Repo: repo}
		c, err := family.MultiSWEClassOf(r)
		require.NoError(t, err)
		langs[c.Language] = true
	}
	for _, l := range []string{"java", "typescript", "javascript", "go", "rust", "c", "cpp"} {
		assert.True(t, langs[l], l)
	}
}

// multiSWEHubRow is a Multi-SWE-bench row in Parquet: base a struct column,
// the test dicts and results JSON text.
type multiSWEHubRow struct {
	Org    string `parquet:"org"`
	Repo   string `parquet:"repo"`
	Number int64  `parquet:"number"`
	Base   struct {
		Label string `parquet:"label"`
		Ref   string `parquet:"ref"`
		SHA   string `parquet:"sha"`
	} `parquet:"base"`
	FixPatch   string `parquet:"fix_patch"`
	TestPatch  string `parquet:"test_patch"`
	F2P        string `parquet:"f2p_tests"`
	P2P        string `parquet:"p2p_tests"`
	S2P        string `parquet:"s2p_tests"`
	N2P        string `parquet:"n2p_tests"`
	RunResult  string `parquet:"run_result"`
	TestResult string `parquet:"test_patch_result"`
}

// Multi-SWE-bench's rows, read by its dataset's name from the Hub fake,
// are the family's and grade as the JSONL fixtures do.
func TestMultiSWELoadsByHubName(t *testing.T) {
	rows, want := loadMultiSWE(t)
	var pq []multiSWEHubRow
	for _, in := range rows {
		var h multiSWEHubRow
		r, err := family.MultiSWERowOf(in)
		require.NoError(t, err)
		h.Org, h.Repo, h.Number, h.Base.SHA, h.FixPatch, h.TestPatch = r.Org, r.Repo, int64(r.Number), r.BaseSHA, r.FixPatch, r.TestPatch
		for field, dst := range map[string]*string{"f2p_tests": &h.F2P, "p2p_tests": &h.P2P, "s2p_tests": &h.S2P, "n2p_tests": &h.N2P,
			"run_result": &h.RunResult, "test_patch_result": &h.TestResult} {
			*dst = string(in.Extra[field])
		}
		pq = append(pq, h)
	}
	const name = "ByteDance-Seed/Multi-SWE-bench"
	loaded := loadByName(t, name, "test", parquetBytes(t, pq))
	require.Len(t, loaded, len(rows))
	for i, in := range loaded {
		f, _, err := family.Resolve(in, family.Hint{Dataset: name})
		require.NoError(t, err)
		require.NotNil(t, f)
		require.Equal(t, "multi-swe-bench", f.Name)
		assert.Equal(t, rows[i].InstanceID, in.InstanceID)
		assert.Equal(t, want[in.InstanceID].Image, f.ImageName(in, f.Namespace, "latest"))
		got, err := family.MultiSWERowOf(in)
		require.NoError(t, err)
		exp, err := family.MultiSWERowOf(rows[i])
		require.NoError(t, err)
		assert.Equal(t, exp, got)
	}
}

// Each fixture row runs as Multi-SWE-bench's run_instance runs it
// (expected.json, from its code at family.MultiSWECommit): the spec's
// working directory is the images' WORKDIR, which set no USER (root: the
// evaluator's prebuilt sandbox), eval.sh puts the model patch where
// fix_patch_path() says and ends by exec'ing fix_patch_run(), the
// fix-run.sh it runs is among the files the image copies to /home/, and
// the image is image_full_name().
func TestMultiSWESpecRunsAsItsHarness(t *testing.T) {
	rows, want := loadMultiSWE(t)
	for _, in := range rows {
		t.Run(in.InstanceID, func(t *testing.T) {
			w := want[in.InstanceID]
			f, _, err := family.Resolve(in, family.Hint{})
			require.NoError(t, err)
			ts, err := f.TestSpec(in, spec.WithNamespace(f.Namespace))
			require.NoError(t, err)
			assert.Equal(t, w.Image, ts.Image)
			assert.Equal(t, family.GradingMultiSWE, ts.Grading)
			assert.Equal(t, strings.TrimSuffix(w.Workdir, "/"), ts.Run.Dir())
			assert.Empty(t, w.User, "the harness runs as root")
			assert.True(t, ts.Run.ScriptAppliesPatch)
			assert.Contains(t, w.HomeFiles, "fix-run.sh")
			r, err := family.MultiSWERowOf(in)
			require.NoError(t, err)
			staging := "/home/" + r.Repo + "/.git"
			assert.Equal(t, staging, ts.Run.StagingDir())
			assert.Equal(t, "#!/bin/bash\nif [ ! -f /home/fix-run.sh ]; then echo '"+family.MultiSWEImageMarker+"'; exit 1; fi\n"+
				"cat "+staging+"/swebox/patch.diff > "+w.PatchPath+"\nexec "+w.Command+"\n", ts.EvalScript(spec.ScriptOptions{}))
			assert.Equal(t, in.FailToPass, ts.FailToPass)
			assert.Equal(t, in.PassToPass, ts.PassToPass)
		})
	}
}
