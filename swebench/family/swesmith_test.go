package family_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// smithExpected is one row of testdata/swesmith/expected.json: what
// SWE-smith's harness at c5b45e5 did with the row under a fake engine
// (regenerate.sh).
type smithExpected struct {
	Image string `json:"image"`
	Calls []struct {
		Cmd     string  `json:"cmd"`
		Workdir *string `json:"workdir"`
		User    *string `json:"user"`
	} `json:"calls"`
	EvalSh string            `json:"eval_sh"`
	Parsed map[string]string `json:"parsed"`
	Report *struct {
		PatchIsNone              *bool `json:"patch_is_None"`
		PatchExists              *bool `json:"patch_exists"`
		PatchSuccessfullyApplied *bool `json:"patch_successfully_applied"`
		Resolved                 *bool `json:"resolved"`
		TimedOut                 bool  `json:"timed_out"`
		TestsStatus              map[string]struct {
			Success []string `json:"success"`
			Failure []string `json:"failure"`
		} `json:"tests_status"`
	} `json:"report"`
	Error *string `json:"error"`
}

// smithCase is testdata/swesmith/logs/<id>.json: what the fake engine
// answered.
type smithCase struct {
	Output   string   `json:"output"`
	Gold     bool     `json:"gold"`
	Fail     []string `json:"fail"`
	TimedOut bool     `json:"timed_out"`
}

// normaliseFiles sorts the words after the profile's command on the test
// command line: the harness lists the FAIL_TO_PASS files in the order of
// a Python set.
func normaliseFiles(script, testCmd string) string {
	lines := strings.Split(script, "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, testCmd+" "); ok && !strings.HasPrefix(rest, `"`) {
			w := strings.Fields(rest)
			sort.Strings(w)
			lines[i] = testCmd + " " + strings.Join(w, " ")
		}
	}
	return strings.Join(lines, "\n")
}

// TestSmithAsUpstream: for every fixture row, the image, the revision
// checked out, the patch commands, eval.sh, the parser's status map and
// the verdict and test lists are those of SWE-smith's own harness.
func TestSmithAsUpstream(t *testing.T) {
	rows, err := dataset.LoadDataset("testdata/swesmith/rows.jsonl")
	require.NoError(t, err)
	var expected map[string]smithExpected
	b, err := os.ReadFile("testdata/swesmith/expected.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	require.Len(t, expected, len(rows))
	agree := 0
	for _, inst := range rows {
		t.Run(inst.InstanceID, func(t *testing.T) {
			want := expected[inst.InstanceID]
			var c smithCase
			b, err := os.ReadFile(filepath.Join("testdata/swesmith/logs", inst.InstanceID+".json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &c))

			f, _, err := family.Resolve(inst, family.Hint{})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, "swe-smith", f.Name)
			ts, err := f.TestSpec(inst, spec.WithMode(harness.ModeWorkspace))
			require.NoError(t, err)
			ok := assert.Equal(t, want.Image, ts.Image)
			ok = assert.Equal(t, want.Image, family.SmithImage(inst.InstanceID, "", "")) && ok
			ok = assert.True(t, f.HostCheckout) && ok

			// The checkout: git fetch, then git checkout base_commit,
			// which swebox does on the host.
			require.GreaterOrEqual(t, len(want.Calls), 2)
			ok = assert.Equal(t, "git fetch", want.Calls[0].Cmd) && ok
			ok = assert.Equal(t, "git checkout "+inst.BaseCommit, want.Calls[1].Cmd) && ok
			// The patch commands tried, in order, as root in /testbed.
			var applied []string
			for _, call := range want.Calls[2:] {
				if call.Cmd == "/bin/bash /eval.sh" {
					break
				}
				applied = append(applied, call.Cmd)
				ok = assert.Equal(t, harness.RepoDir, *call.Workdir) && ok
				ok = assert.Equal(t, "root", *call.User) && ok
			}
			var ours []string
			for _, argv := range ts.Run.PatchCommands[:len(applied)] {
				w := append([]string(nil), argv...)
				if c.Gold {
					// Upstream reverses the bug patch with --reverse;
					// swebox's gold patch is the bug patch reversed.
					w = append(w, "--reverse")
				}
				ours = append(ours, strings.Join(append(w, "/tmp/patch.diff"), " "))
			}
			ok = assert.Equal(t, applied, ours) && ok

			if want.EvalSh != "" {
				p, err := family.SmithProfileOf(inst.InstanceID)
				require.NoError(t, err)
				got := ts.EvalScript(spec.ScriptOptions{})
				ok = assert.Equal(t, normaliseFiles(want.EvalSh, p.TestCmd), normaliseFiles(got, p.TestCmd)) && ok
			}

			if want.Parsed != nil {
				text := c.Output
				start := strings.Index(text, "+ : '"+harness.StartTestOutput+"'") + len("+ : '"+harness.StartTestOutput+"'")
				text = text[start:strings.Index(text, "+ : '"+harness.EndTestOutput+"'")]
				sm := family.SmithParse(inst.InstanceID, text)
				got := map[string]string{}
				for k, v := range sm {
					got[k] = string(v)
				}
				ok = assert.Equal(t, want.Parsed, got) && ok
			}

			switch {
			case want.Report == nil && want.Error == nil:
				// The harness wrote no report: the patch did not apply
				// (swebox: ErrPatchApply, the prediction's failure) or the
				// checkout failed (swebox checks out on the host: an
				// infrastructure error).
				ok = assert.NotEmpty(t, c.Fail) && ok
			case want.Report != nil && want.Report.TimedOut:
				// swebox: OutcomeTimedOut, unresolved.
				ok = assert.True(t, c.TimedOut) && ok
				ok = assert.Nil(t, want.Report.Resolved) && ok
			default:
				rep, err := grade.Grade(grade.Input{InstanceID: inst.InstanceID, Log: c.Output, Grading: ts.Grading,
					Rules: ts.Rules, FailToPass: inst.FailToPass, PassToPass: inst.PassToPass, Parser: ts.Parser})
				require.NoError(t, err)
				ok = assert.Equal(t, family.GradingSmith, rep.Notes.Grading) && ok
				if want.Error != nil {
					// read_test_output raised: no report, unresolved.
					ok = assert.False(t, rep.Resolved) && ok
					ok = assert.Nil(t, rep.TestsStatus) && ok
					break
				}
				ok = assert.Equal(t, *want.Report.Resolved, rep.Resolved) && ok
				ok = assert.Equal(t, *want.Report.PatchExists, rep.PatchExists) && ok
				ok = assert.Equal(t, *want.Report.PatchSuccessfullyApplied, rep.PatchSuccessfullyApplied) && ok
				if want.Report.TestsStatus == nil {
					ok = assert.Nil(t, rep.TestsStatus) && ok
					break
				}
				require.NotNil(t, rep.TestsStatus)
				for key, got := range map[string]grade.Results{
					"FAIL_TO_PASS": rep.TestsStatus.FailToPass, "PASS_TO_PASS": rep.TestsStatus.PassToPass,
					"FAIL_TO_FAIL": rep.TestsStatus.FailToFail, "PASS_TO_FAIL": rep.TestsStatus.PassToFail,
				} {
					w := want.Report.TestsStatus[key]
					ok = assert.Equal(t, nonNil(w.Success), nonNil(got.Success), key) && ok
					ok = assert.Equal(t, nonNil(w.Failure), nonNil(got.Failure), key) && ok
				}
			}
			if ok {
				agree++
			}
		})
	}
	assert.Equal(t, len(rows), agree, "rows whose image, commands, eval.sh, parse and verdict agree with SWE-smith's harness")
}

// TestSmithProfilesAsUpstream: swebox's profile table holds exactly the
// harness's profiles whose test command runs pytest, with their names,
// commits, commands and images; the others are refused by name.
func TestSmithProfilesAsUpstream(t *testing.T) {
	var profiles map[string]struct {
		Owner, Repo, Commit string
		TestCmd             string `json:"test_cmd"`
		ImageName           string `json:"image_name"`
		Mirror              string `json:"mirror"`
	}
	b, err := os.ReadFile("testdata/swesmith/profiles.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &profiles))
	require.Greater(t, len(profiles), 100)
	ported := 0
	for key, want := range profiles {
		got, err := family.SmithProfileOf(key + ".func_pm_x__abc")
		if !strings.Contains(want.TestCmd, "pytest") {
			assert.ErrorIs(t, err, family.ErrSmithRepo, key)
			assert.Contains(t, err.Error(), key)
			continue
		}
		require.NoError(t, err, key)
		ported++
		assert.Equal(t, key, got.Name())
		assert.Equal(t, want.Owner, got.Owner, key)
		assert.Equal(t, want.Repo, got.Repo, key)
		assert.Equal(t, want.Commit, got.Commit, key)
		assert.Equal(t, want.TestCmd, got.TestCmd, key)
		assert.Equal(t, want.ImageName, got.Image(), key)
		assert.Equal(t, family.SmithMirrorOwner+"/"+key, want.Mirror, key)
	}
	assert.Equal(t, 131, ported)
}

// TestSmithRowMapping: a row without base_commit loads with base_ref, its
// instance branch; the row's patch (the bug) is kept as bug_patch and
// patch is its reverse; a row of an unported profile is refused by the
// profile's name; a base_ref that is not a plain ref name is an error
// naming the field.
func TestSmithRowMapping(t *testing.T) {
	bug := "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x + 1\n+    return x - 1\n"
	row := map[string]any{
		"instance_id": "mewwts__addict.75284f95.func_pm_op_change__x1", "repo": "swesmith/mewwts__addict.75284f95",
		"patch": bug, "FAIL_TO_PASS": []string{"tests/t.py::a"}, "PASS_TO_PASS": []string{},
		"image_name": "jyangballin/swesmith.x86_64.mewwts_1776_addict.75284f95", "problem_statement": "p",
	}
	b, err := json.Marshal(row)
	require.NoError(t, err)
	var inst dataset.Instance
	require.NoError(t, json.Unmarshal(b, &inst))
	assert.Equal(t, "", inst.BaseCommit)
	assert.Equal(t, "mewwts__addict.75284f95.func_pm_op_change__x1", inst.BaseRef)
	assert.Equal(t, "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x - 1\n+    return x + 1\n", inst.Patch)
	assert.JSONEq(t, mustJSON(t, bug), string(inst.Extra["bug_patch"]))

	// Written out and read again, the row is the same.
	out, err := json.Marshal(inst)
	require.NoError(t, err)
	var again dataset.Instance
	require.NoError(t, json.Unmarshal(out, &again))
	assert.Equal(t, inst.Patch, again.Patch)
	assert.Equal(t, inst.BaseRef, again.BaseRef)

	f, _, err := family.Resolve(inst, family.Hint{Dataset: "SWE-bench/SWE-smith"})
	require.NoError(t, err)
	require.NotNil(t, f)
	assert.Equal(t, "swe-smith", f.Name)

	row["instance_id"], row["repo"] = "gin-gonic__gin.3c12d2a8.x", "swesmith/gin-gonic__gin.3c12d2a8"
	b, err = json.Marshal(row)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &inst))
	_, err = f.TestSpec(inst)
	require.ErrorIs(t, err, family.ErrSmithRepo)
	assert.Contains(t, err.Error(), "gin-gonic__gin.3c12d2a8")

	var bad dataset.Instance
	err = json.Unmarshal([]byte(`{"instance_id":"x","repo":"o/r","base_ref":"a;rm -rf /"}`), &bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"base_ref"`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestReversePatch: the reverse of a patch that adds, deletes, renames and
// changes files swaps each of them, and reversing twice gives the patch
// back.
func TestReversePatch(t *testing.T) {
	p := "diff --git a/a.py b/a.py\nindex 1111111..2222222 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,4 @@\n x = 1\n-y = 2\n+y = 3\n+z = 4\n w = 5\n" +
		"diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+print(1)\n\\ No newline at end of file\n" +
		"diff --git a/old name.py b/new name.py\nsimilarity index 90%\nrename from old name.py\nrename to new name.py\n"
	r, err := family.ReversePatch(p)
	require.NoError(t, err)
	assert.Equal(t, "diff --git a/a.py b/a.py\nindex 2222222..1111111 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,3 @@\n x = 1\n-y = 3\n-z = 4\n+y = 2\n w = 5\n"+
		"diff --git a/new.py b/new.py\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/new.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-print(1)\n\\ No newline at end of file\n"+
		"diff --git a/new name.py b/old name.py\nsimilarity index 90%\nrename from new name.py\nrename to old name.py\n", r)
	back, err := family.ReversePatch(r)
	require.NoError(t, err)
	assert.Equal(t, p, back)

	_, err = family.ReversePatch("diff --git a/x b/x\nGIT binary patch\nliteral 0\n")
	assert.ErrorContains(t, err, "binary")
	_, err = family.ReversePatch("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n")
	assert.ErrorContains(t, err, "short")
}

// TestSmithParsersEdgeCases: the Unicode whitespace Python's \s and \S
// read, statuses matched as prefixes, and mypy's last word.
func TestSmithParsersEdgeCases(t *testing.T) {
	sm := family.SmithParse("mewwts__addict.75284f95.x", "t1\u00a0PASSED\nt2 FAILEDX\nt3\tERROR [50%]\n  t4 PASSED\n")
	assert.Equal(t, logparse.StatusMap{"t1": logparse.PASSED, "t2": logparse.FAILED, "t3": logparse.ERROR}, sm)
	sm = family.SmithParse("python__mypy.e93f06ce.x", "PASSED a::b\nsomething FAILED  c::d \nPASSED\n")
	assert.Equal(t, logparse.StatusMap{"a::b": logparse.PASSED, "c::d": logparse.FAILED, "PASSED": logparse.PASSED}, sm)
	sm = family.SmithParse("HIPS__autograd.ac044f0d.x", "[gw12] PASSED t\n[gw3] XFAIL u v\n")
	assert.Equal(t, logparse.StatusMap{"u": logparse.XFAIL}, sm)
}

// smithHubRow is a SWE-smith row as the Hub's Parquet export stores it:
// the test lists as lists, no base_commit, no test_patch.
type smithHubRow struct {
	InstanceID string   `parquet:"instance_id"`
	Patch      string   `parquet:"patch"`
	FailToPass []string `parquet:"FAIL_TO_PASS,list"`
	PassToPass []string `parquet:"PASS_TO_PASS,list"`
	CreatedAt  string   `parquet:"created_at"`
	ImageName  string   `parquet:"image_name"`
	Repo       string   `parquet:"repo"`
	Problem    string   `parquet:"problem_statement"`
}

// SWE-smith's rows load by the dataset's Hub name (train split) without
// base_commit: each names its instance branch (base_ref), its patch is
// the fix, and its spec is the fixture rows' spec.
func TestSmithLoadsByHubName(t *testing.T) {
	rows, err := dataset.LoadDataset("testdata/swesmith/rows.jsonl")
	require.NoError(t, err)
	var pq []smithHubRow
	for _, in := range rows {
		var bug, img string
		require.NoError(t, json.Unmarshal(in.Extra["bug_patch"], &bug))
		require.NoError(t, json.Unmarshal(in.Extra["image_name"], &img))
		pq = append(pq, smithHubRow{in.InstanceID, bug, in.FailToPass, in.PassToPass, in.CreatedAt, img, in.Repo, in.ProblemStatement})
	}
	loaded := loadByName(t, "SWE-bench/SWE-smith", "train", parquetBytes(t, pq))
	require.Len(t, loaded, len(rows))
	fam, ok := family.ForDataset("SWE-bench/SWE-smith")
	require.True(t, ok)
	require.Equal(t, "swe-smith", fam.Name)
	for i, in := range loaded {
		f, _, err := family.Resolve(in, family.Hint{Dataset: "SWE-bench/SWE-smith"})
		require.NoError(t, err)
		require.Equal(t, fam, f)
		assert.Equal(t, "", in.BaseCommit)
		assert.Equal(t, in.InstanceID, in.BaseRef)
		assert.Equal(t, rows[i].Patch, in.Patch, "the fix: the bug patch reversed")
		got, err := f.TestSpec(in)
		require.NoError(t, err)
		want, err := f.TestSpec(rows[i])
		require.NoError(t, err)
		assert.Equal(t, want.EvalScript(spec.ScriptOptions{}), got.EvalScript(spec.ScriptOptions{}))
		assert.Equal(t, want.Image, got.Image)
		assert.Equal(t, family.GradingSmith, got.Grading)
	}
}
