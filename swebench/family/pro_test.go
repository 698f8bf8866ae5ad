package family_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// proExpected is what SWE-bench Pro's own harness code at
// family.ProCommit gives on a fixture (testdata/pro/regenerate.sh).
type proExpected struct {
	Image       string            `json:"image"`
	EntryScript string            `json:"entryscript"`
	Output      *family.ProOutput `json:"output"`
	Resolved    bool              `json:"resolved"`
	Error       string            `json:"error"`
}

// loadProRows reads the fixture rows and a stand-in of the
// SWE-bench_Pro-os checkout: the fixture Dockerfiles, and run_scripts/
// for the rows whose harness found them (their content does not reach
// the entry script; upstream code is not committed).
func loadProRows(t *testing.T) ([]dataset.Instance, fstest.MapFS) {
	t.Helper()
	f, err := os.Open("testdata/pro/rows.jsonl")
	require.NoError(t, err)
	defer f.Close()
	fsys := fstest.MapFS{}
	var rows []dataset.Instance
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var in dataset.Instance
		require.NoError(t, json.Unmarshal(sc.Bytes(), &in))
		rows = append(rows, in)
		for _, kind := range []string{"base", "instance"} {
			name := path.Join("dockerfiles", kind+"_dockerfile", in.InstanceID, "Dockerfile")
			b, err := os.ReadFile(path.Join("testdata/pro", name))
			require.NoError(t, err)
			fsys[name] = &fstest.MapFile{Data: b}
		}
		if string(in.Extra["_upstream_files"]) != "false" {
			fsys[path.Join("run_scripts", in.InstanceID, "run_script.sh")] = &fstest.MapFile{Data: []byte("echo run\n")}
			fsys[path.Join("run_scripts", in.InstanceID, "parser.py")] = &fstest.MapFile{Data: []byte("print('parse')\n")}
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows, fsys
}

// TestProAgreesWithUpstream: on rows of three repositories and languages
// (Go, Python, JavaScript), passing and failing logs and infrastructure
// failures (a build that fails, a crashed runner, no scripts for the
// instance), swebox gives Pro's harness's image name, entry script (byte
// for byte), and verdict from the output.json its parser.py wrote.
func TestProAgreesWithUpstream(t *testing.T) {
	rows, fsys := loadProRows(t)
	raw, err := os.ReadFile("testdata/pro/expected.json")
	require.NoError(t, err)
	var expected map[string]proExpected
	require.NoError(t, json.Unmarshal(raw, &expected))
	agree := 0
	for _, in := range rows {
		var name string
		require.NoError(t, json.Unmarshal(in.Extra["_case"], &name))
		want, ok := expected[name]
		require.True(t, ok, name)
		t.Run(name, func(t *testing.T) {
			f, _, err := family.Resolve(in, family.Hint{Dataset: "ScaleAI/SWE-bench_Pro"})
			require.NoError(t, err)
			require.NotNil(t, f)
			require.Equal(t, "swe-bench-pro", f.Name)
			assert.Equal(t, want.Image, f.ImageName(in, f.Namespace, "latest"))
			ts, err := f.TestSpec(in, spec.WithFamilyFiles(fsys))
			if want.Error != "" {
				require.ErrorIs(t, err, family.ErrProRow)
				assert.False(t, want.Resolved)
				agree++
				return
			}
			require.NoError(t, err)
			files, err := family.LoadProFiles(fsys, in.InstanceID)
			require.NoError(t, err)
			entry, err := family.ProEntryScript(in, files, "/workspace")
			require.NoError(t, err)
			assert.Equal(t, want.EntryScript, entry)
			assert.Equal(t, family.GradingPro, ts.Grading)
			assert.Contains(t, ts.EvalScript(spec.ScriptOptions{}), "bash "+family.ProWorkspace+"/entryscript.sh")

			// The log the eval script prints: output.json between the
			// markers, or nothing there when the parser wrote none.
			log := "+ bash entryscript.sh\n" + harness.StartTestOutput + "\n"
			if want.Output != nil {
				b, err := json.MarshalIndent(want.Output, "", "  ")
				require.NoError(t, err)
				log += string(b) + "\n"
			} else {
				log += "cat: " + family.ProWorkspace + "/output.json: No such file or directory\n"
			}
			log += harness.EndTestOutput + "\n"
			rep, err := grade.Grade(grade.Input{
				InstanceID: in.InstanceID, Log: log, Grading: ts.Grading,
				FailToPass: ts.FailToPass, PassToPass: ts.PassToPass,
			})
			require.NoError(t, err)
			if assert.Equal(t, want.Resolved, rep.Resolved) {
				agree++
			}
		})
	}
	assert.Equal(t, len(rows), agree, "fixtures agreeing with Pro's harness")
	t.Logf("%d of %d fixtures agree with scaleapi/SWE-bench_Pro-os at %s", agree, len(rows), family.ProCommit[:7])
}

// TestProRowMapping: the lowercase fail_to_pass and pass_to_pass, Python
// list literals as Pro publishes them, are the tests graded; without a
// SWE-bench_Pro-os checkout the row is refused, not run.
func TestProRowMapping(t *testing.T) {
	rows, fsys := loadProRows(t)
	in := rows[len(rows)-4] // js-pass: quotes and a backslash in names
	assert.Empty(t, in.FailToPass)
	ts, err := mustFamily(t, "pro").TestSpec(in, spec.WithFamilyFiles(fsys))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"test/translator.js | Translator shim .translate() should translate correctly",
		`test/translator.js | Translator shim it's "quoted" \ too`,
	}, ts.FailToPass)
	assert.Equal(t, []string{"test/meta.js | meta should log targets"}, ts.PassToPass)
	_, err = mustFamily(t, "pro").TestSpec(in)
	assert.ErrorIs(t, err, family.ErrProRow)
}

func mustFamily(t *testing.T, name string) *family.Family {
	t.Helper()
	f, ok := family.Lookup(name)
	require.True(t, ok)
	return f
}

func TestPyStringList(t *testing.T) {
	type testCase struct {
		name, in string
		want     []string
		bad      bool
	}
	for _, tc := range []testCase{
		{name: "empty", in: "[]", want: []string{}},
		{name: "mixed quotes", in: `['a', "b'c", 'd\'e',]`, want: []string{"a", "b'c", "d'e"}},
		{name: "escapes", in: `['x\\y', '\x41\u00e9\n']`, want: []string{`x\y`, "Aé\n"}},
		{name: "not a list", in: "'a'", bad: true},
		{name: "unterminated", in: "['a]", bad: true},
		{name: "a number", in: "[1]", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := family.PyStringList(tc.in)
			if tc.bad {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The eval script's own lines: a workspace it could not set up (nothing
// of the patch's ran) is an infrastructure error, never a verdict; a patch
// that git apply --check refuses is graded by its tests as Pro grades it,
// with patch_successfully_applied false. bash's trace (set -x) of the
// markers' echo and of the cat does not hide output.json.
func TestProScriptLines(t *testing.T) {
	out := `{"tests": [{"name": "a", "status": "PASSED"}]}`
	traced := func(before string) string {
		return before + "++ echo '" + harness.StartTestOutput + "'\n" + harness.StartTestOutput + "\n++ cat /tmp/sweap-workspace/output.json\n" +
			out + "++ echo '" + harness.EndTestOutput + "'\n" + harness.EndTestOutput + "\n"
	}
	type testCase struct {
		name, log         string
		err               error
		resolved, applied bool
	}
	for _, tc := range []testCase{
		{name: "applied", log: traced("Applied patch a.py cleanly.\n"), resolved: true, applied: true},
		{name: "not applied", log: traced(family.ProPatchNotApplied + "\nerror: a.py: No such file or directory\n"), resolved: true},
		{name: "setup failed", log: "bash: line 140: python: command not found\n++ pro_setup_failed\n" + family.ProSetupFailed + "\n++ exit 3\n", err: family.ErrProSetup},
		{name: "setup line after the start marker", log: traced("") + family.ProSetupFailed + "\n", resolved: true, applied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := grade.Grade(grade.Input{InstanceID: "i", Log: tc.log, Grading: family.GradingPro, FailToPass: []string{"a"}, PassToPass: []string{}})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.resolved, rep.Resolved)
			assert.Equal(t, tc.applied, rep.PatchSuccessfullyApplied)
		})
	}
}

// proHubRow is a row of ScaleAI/SWE-bench_Pro as the Hub's Parquet export
// stores it: lowercase test lists as Python list literals in strings, and
// dockerhub_tag, the tag of the instance's image.
type proHubRow struct {
	Repo             string `parquet:"repo"`
	InstanceID       string `parquet:"instance_id"`
	BaseCommit       string `parquet:"base_commit"`
	Patch            string `parquet:"patch"`
	TestPatch        string `parquet:"test_patch"`
	Problem          string `parquet:"problem_statement"`
	Requirements     string `parquet:"requirements"`
	Interface        string `parquet:"interface"`
	RepoLanguage     string `parquet:"repo_language"`
	FailToPass       string `parquet:"fail_to_pass"`
	PassToPass       string `parquet:"pass_to_pass"`
	BeforeRepoSetCmd string `parquet:"before_repo_set_cmd"`
	SelectedTests    string `parquet:"selected_test_files_to_run"`
	DockerhubTag     string `parquet:"dockerhub_tag"`
}

// Pro's rows, read by the dataset's Hub name, are the family's: the image
// is Pro's own (jefzda/sweap-images:<the row's dockerhub_tag>, as
// get_dockerhub_image_uri names it), the tests graded are the row's
// lowercase lists, and the spec is Pro's entry script.
func TestProLoadsByHubName(t *testing.T) {
	rows, fsys := loadProRows(t)
	const nodebb = "instance_NodeBB__NodeBB-7b8bffd763e2155cf88f3ebc258fa68ebe18188d-vf2cf3cbd463b7ad942381f1c6d077626485a1e9e"
	str := func(in dataset.Instance, k string) string {
		var s string
		require.NoError(t, json.Unmarshal(in.Extra[k], &s))
		return s
	}
	var pq []proHubRow
	for _, in := range []dataset.Instance{rows[0], rows[5], rows[9]} { // Go, Python, JavaScript
		pq = append(pq, proHubRow{in.Repo, in.InstanceID, in.BaseCommit, "diff", "", "p", "r", "i", str(in, "repo_language"),
			str(in, "fail_to_pass"), str(in, "pass_to_pass"), str(in, "before_repo_set_cmd"), str(in, "selected_test_files_to_run"), ""})
	}
	// The tag the dataset and Pro's README give for this instance.
	pq = append(pq, proHubRow{"NodeBB/NodeBB", nodebb, rows[9].BaseCommit, "diff", "", "p", "", "", "js", "['a']", "[]",
		"git checkout x -- test/a.js", "['test/a.js']", "nodebb.nodebb-NodeBB__NodeBB-7b8bffd763e2155cf88f3ebc258fa68ebe18188d-vf2cf3cbd463b7ad942381f1c6d077626485a1e9e"})
	loaded := loadByName(t, "ScaleAI/SWE-bench_Pro", "test", parquetBytes(t, pq))
	require.Len(t, loaded, len(pq))
	fam, ok := family.ForDataset("ScaleAI/SWE-bench_Pro")
	require.True(t, ok)
	require.Equal(t, "swe-bench-pro", fam.Name)
	for i, in := range loaded {
		f, _, err := family.Resolve(in, family.Hint{Dataset: "ScaleAI/SWE-bench_Pro"})
		require.NoError(t, err)
		require.Equal(t, fam, f)
		image := f.ImageName(in, f.Namespace, "latest")
		assert.True(t, strings.HasPrefix(image, "jefzda/sweap-images:"), image)
		if pq[i].DockerhubTag != "" {
			assert.Equal(t, "jefzda/sweap-images:"+pq[i].DockerhubTag, image)
		}
		if in.InstanceID == nodebb {
			continue // no files for it in the fixture checkout
		}
		ts, err := f.TestSpec(in, spec.WithFamilyFiles(fsys), spec.WithNamespace(f.Namespace))
		require.NoError(t, err)
		assert.Equal(t, image, ts.Image)
		assert.Equal(t, family.ProProcedure, ts.Run)
		want, err := f.TestSpec(rows[[]int{0, 5, 9}[i]], spec.WithFamilyFiles(fsys), spec.WithNamespace(f.Namespace))
		require.NoError(t, err)
		assert.Equal(t, want.FailToPass, ts.FailToPass)
		assert.Equal(t, want.PassToPass, ts.PassToPass)
		assert.Equal(t, want.EvalScript(spec.ScriptOptions{}), ts.EvalScript(spec.ScriptOptions{}))
	}
}
