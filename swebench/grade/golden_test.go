package grade_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output")

// scenario grades one captured log (testdata/logs/<log>.<rules>.txt, written
// by ../logparse/testdata/capture.sh with real runners) against made-up
// FAIL_TO_PASS / PASS_TO_PASS lists chosen to hit the official rules.
type scenario struct {
	log, parser string
	f2p, p2p    []string
	resolved    map[harness.Rules]bool
	usable      bool
}

var scenarios = []scenario{
	{log: "pytest_ra", parser: "pytest",
		f2p:      []string{"tests/test_stub.py::test_pass", "tests/test_stub.py::test_xfail"},
		p2p:      []string{"tests/test_stub.py::TestGroup::test_method", "tests/test_stub.py::test_param[a", "[1]"},
		resolved: map[harness.Rules]bool{harness.V4: true, harness.V5: false}, usable: true},
	// pytest -rA summarises skips by location, so a skipped test is missing.
	{log: "pytest_ra", parser: "pytest",
		f2p:      []string{"tests/test_stub.py::test_skip_mark"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
	{log: "pytest_noheader", parser: "seaborn",
		f2p: []string{"tests/test_stub.py::test_pass"}, p2p: []string{"tests/test_stub.py::test_xfail"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
	{log: "pytest_classic", parser: "pytest_v2",
		f2p:      []string{"tests/test_stub.py::test_param[a", "tests/test_stub.py::test_pass"},
		p2p:      []string{"tests/test_stub.py::test_xfail"},
		resolved: map[harness.Rules]bool{harness.V4: true, harness.V5: false}, usable: true},
	{log: "pytest_color", parser: "pytest_v2",
		f2p:      []string{"tests/test_stub.py::test_pass", "tests/test_stub.py::test_mouse[MouseButton.LEFT]"},
		p2p:      []string{"tests/test_stub.py::TestGroup::test_method"},
		resolved: map[harness.Rules]bool{harness.V4: true, harness.V5: true}, usable: true},
	{log: "pytest_ra", parser: "matplotlib",
		f2p:      []string{"tests/test_stub.py::test_mouse[1]"},
		p2p:      []string{"tests/test_stub.py::test_mouse[3]"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
	{log: "pytest_collect_error", parser: "pytest",
		f2p:      []string{"broken/test_broken.py::test_never_runs"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
	{log: "pytest_all_pass", parser: "pytest_options",
		f2p:      []string{"tests/sub/test_deep.py::test_numbers[0]"},
		p2p:      []string{"tests/sub/test_deep.py::test_numbers[1]"},
		resolved: map[harness.Rules]bool{harness.V4: true, harness.V5: true}, usable: true},
	{log: "unittest_verbose", parser: "django",
		f2p: []string{"test_ok (app.tests.ModelTests.test_ok)", "Docstring first line is the name Django tests get."},
		p2p: []string{"test_system_check (app.tests.InterruptedTests.test_system_check)", "test_skip (app.tests.ModelTests.test_skip)",
			"--version is equivalent to version", "test_no_migrations (app.tests.MigrationTests.test_no_migrations)"},
		resolved: map[harness.Rules]bool{harness.V4: true, harness.V5: true}, usable: true},
	{log: "unittest_verbose", parser: "django",
		f2p:      []string{"test_expected_failure (app.tests.ModelTests.test_expected_failure)"},
		p2p:      []string{"test_fail (app.tests.ModelTests.test_fail)"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
	{log: "sympy_verbose", parser: "sympy",
		f2p:      []string{"test_structure", "test_printmethod"},
		p2p:      []string{"test_lambdify_cse"},
		resolved: map[harness.Rules]bool{harness.V4: false, harness.V5: false}, usable: true},
}

// TestGoldenReports grades the captured logs and compares report.json with
// testdata/golden, byte for byte; the verdicts are also pinned here.
func TestGoldenReports(t *testing.T) {
	for i, sc := range scenarios {
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			name := fmt.Sprintf("%02d-%s.%s.%s", i, sc.log, sc.parser, rules)
			t.Run(name, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join("testdata", "logs", sc.log+"."+string(rules)+".txt"))
				require.NoError(t, err)
				id := fmt.Sprintf("swebox__stub-%d", i+1)
				rep, err := grade.Grade(grade.Input{InstanceID: id, Log: string(raw), Parser: sc.parser,
					FailToPass: sc.f2p, PassToPass: sc.p2p, Rules: rules})
				require.NoError(t, err)
				assert.Equal(t, sc.usable, rep.PatchSuccessfullyApplied, "usable")
				assert.Equal(t, sc.resolved[rules], rep.Resolved, "resolved")
				compareGolden(t, filepath.Join("testdata", "golden", name+".json"), rep.Encode())
			})
		}
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -update")
	assert.Equal(t, string(want), string(got))
}

// pythonDumps returns, for each document, json.dumps(json.loads(doc),
// indent=4) as Python writes it, plus a final newline when newline is set
// (print), or skips the test where python3 is missing.
func pythonDumps(t *testing.T, docs [][]byte, newline bool) [][]byte {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		cienv.Skip(t, "python3 not found: byte comparison with Python's json.dumps skipped")
	}
	in := make([]string, len(docs))
	for i, d := range docs {
		in[i] = string(d)
	}
	payload, err := json.Marshal(in)
	require.NoError(t, err)
	end := ""
	if newline {
		end = "\\n"
	}
	script := "import json,sys\nout=[json.dumps(json.loads(d), indent=4)+'" + end + "' for d in json.load(sys.stdin)]\njson.dump(out, sys.stdout)"
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(payload)
	raw, err := cmd.Output()
	require.NoError(t, err)
	var out []string
	require.NoError(t, json.Unmarshal(raw, &out))
	res := make([][]byte, len(out))
	for i, s := range out {
		res[i] = []byte(s)
	}
	return res
}

// TestReportBytesMatchPython feeds every report the tests produce through
// Python's json.loads and json.dumps(indent=4): the bytes must not change.
func TestReportBytesMatchPython(t *testing.T) {
	goldens, err := filepath.Glob("testdata/golden/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	var names []string
	var docs [][]byte
	for _, path := range goldens {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		names, docs = append(names, filepath.Base(path)), append(docs, raw)
	}
	tricky := grade.InstanceReport{InstanceID: "odd__name-1", PatchExists: true, PatchSuccessfullyApplied: true, Rules: harness.V5,
		InfraFailure: true, InfraFailureReason: "out_of_memory",
		TestsStatus: &grade.TestsStatus{
			FailToPass: results([]string{"quote \" back \\ slash", "tab\tnl\ncr\r", "ünï 日本 😀", "<html> & 'x'", "\x00\x1f\x7f\u2028"}, nil),
			PassToPass: results(nil, []string{"/"}), FailToFail: results(nil, nil), PassToFail: results(nil, nil)},
		Notes: grade.Notes{Forgery: []string{"end marker appears 2 times"}}}
	names, docs = append(names, "tricky"), append(docs, tricky.Encode())
	names, docs = append(names, "none"), append(docs, grade.InstanceReport{InstanceID: "a__b-2", PatchIsNone: true, Rules: harness.V4}.Encode())
	want := pythonDumps(t, docs, false)
	for i, name := range names {
		assert.Equal(t, string(want[i]), string(docs[i]), name)
	}
}

func TestInstanceReportRoundTrip(t *testing.T) {
	for _, path := range []string{"testdata/golden/00-pytest_ra.pytest.v5.json", "testdata/golden/00-pytest_ra.pytest.v4.json"} {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var rep grade.InstanceReport
		require.NoError(t, json.Unmarshal(raw, &rep))
		assert.Equal(t, string(raw), string(rep.Encode()))
	}
	var rep grade.InstanceReport
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"a": {}, "b": {}}`), &rep), grade.ErrNotOneInstance)
}

func TestReportShape(t *testing.T) {
	v4 := grade.InstanceReport{InstanceID: "a__b-1", PatchExists: true, Rules: harness.V4}
	assert.Equal(t, "{\n    \"a__b-1\": {\n        \"patch_is_None\": false,\n        \"patch_exists\": true,\n"+
		"        \"patch_successfully_applied\": false,\n        \"resolved\": false\n    }\n}", string(v4.Encode()))
	v5 := v4
	v5.Rules = harness.V5
	assert.Contains(t, string(v5.Encode()), "\"resolved\": false,\n        \"infra_failure\": false\n")
	assert.NotContains(t, string(v5.Encode()), "infra_failure_reason")
	assert.NotContains(t, string(v5.Encode()), grade.NotesKey)
}
