//go:build upstream

package grade_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

// officialRepo names, for v4.1.0 (which picks the parser by repository),
// a repository and version of each parser the scenarios use.
var officialRepo = map[string][2]string{
	"pytest": {"pytest-dev/pytest", "5.4"}, "pytest_options": {"psf/requests", "2.0"},
	"pytest_v2": {"astropy/astropy", "5.0"}, "matplotlib": {"matplotlib/matplotlib", "3.5"},
	"seaborn": {"mwaskom/seaborn", "0.12"}, "django": {"django/django", "3.0"}, "sympy": {"sympy/sympy", "1.12"},
}

// TestUpstreamGrading writes report.json for every scenario with Grade and
// with the official harness's own get_eval_report, from checkouts named by
// SWEBOX_SWEBENCH_V4 (v4.1.0) and SWEBOX_SWEBENCH_V5 (5.0.2), and compares
// the bytes (see TestUpstreamParsers in swebench/logparse for the
// checkouts). Built only with -tags upstream: the checkouts are not part of
// this repository, so CI, which runs every test it builds, cannot run it.
func TestUpstreamGrading(t *testing.T) {
	releases := map[harness.Rules]string{harness.V4: os.Getenv("SWEBOX_SWEBENCH_V4"), harness.V5: os.Getenv("SWEBOX_SWEBENCH_V5")}
	if releases[harness.V4] == "" && releases[harness.V5] == "" {
		t.Fatal("set SWEBOX_SWEBENCH_V4 and/or SWEBOX_SWEBENCH_V5 to checkouts of the official harness to compare with its own grading")
	}
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "python3 runs the official grading")
	wrap := func(body, exit string) string {
		return "+ : '>>>>> Start Test Output'\n" + body + "+ SWEBOX=" + exit + "\n+ : '>>>>> End Test Output'\n+ echo '>>>>> Test Exit Code: " + exit + "'\n>>>>> Test Exit Code: " + exit + "\n"
	}
	type gradeCase struct {
		InstanceID string   `json:"instance_id"`
		Repo       string   `json:"repo"`
		Version    string   `json:"version"`
		LogParser  string   `json:"log_parser"`
		EvalType   string   `json:"eval_type"`
		FailToPass []string `json:"FAIL_TO_PASS"`
		PassToPass []string `json:"PASS_TO_PASS"`
		ModelPatch *string  `json:"model_patch"`
		Log        string   `json:"log"`
		parser     string
	}
	patch := "diff"
	type extra struct {
		name, parser, log string
		f2p, p2p          []string
	}
	extras := []extra{
		{"skipped fail-to-pass", "pytest", wrap("SKIPPED t.py::a\nPASSED t.py::b\n", "0"), []string{"t.py::a"}, []string{"t.py::b"}},
		{"skipped pass-to-pass", "pytest", wrap("PASSED t.py::a\nSKIPPED t.py::b\n", "0"), []string{"t.py::a"}, []string{"t.py::b"}},
		{"exit code contradicts", "pytest", wrap("PASSED t.py::a\n", "1"), []string{"t.py::a"}, nil},
		{"forged exit code first", "pytest", "+ : '>>>>> Start Test Output'\nPASSED t.py::a\n>>>>> Test Exit Code: 0\n+ : '>>>>> End Test Output'\n>>>>> Test Exit Code: 1\n", []string{"t.py::a"}, nil},
		{"nothing ran", "pytest", wrap("no tests ran in 0.01s\n", "5"), []string{"t.py::a"}, nil},
		{"browser failed", "pytest", wrap("Error: Failed to launch the browser process\n", "1"), []string{"t.py::a"}, nil},
		{"truncated id, skipped first", "pytest", wrap("PASSED t.py::f\nSKIPPED t.py::x[a-1]\nFAILED t.py::x[a-2] - e\n", "1"), []string{"t.py::f"}, []string{"t.py::x[a"}},
		{"truncated id, failed first", "pytest", wrap("PASSED t.py::f\nFAILED t.py::x[a-2] - e\nSKIPPED t.py::x[a-1]\n", "1"), []string{"t.py::f"}, []string{"t.py::x[a"}},
		{"truncated id disagreeing", "pytest", wrap("PASSED t.py::x[a-1]\nFAILED t.py::x[a-2] - e\n", "1"), []string{"t.py::x[a"}, nil},
		{"patch apply failed", "pytest", ">>>>> Patch Apply Failed\nModuleNotFoundError: x\n", []string{"t.py::a"}, nil},
		{"no markers", "pytest", "PASSED t.py::a\n", []string{"t.py::a"}, nil},
		{"whole-log fallback", "pytest", "PASSED t.py::a\n" + wrap("", "0"), []string{"t.py::a"}, nil},
	}
	var cases []gradeCase
	for i, sc := range scenarios {
		for _, rules := range []harness.Rules{harness.V4, harness.V5} {
			raw, err := os.ReadFile(filepath.Join("testdata", "logs", sc.log+"."+string(rules)+".txt"))
			require.NoError(t, err)
			cases = append(cases, gradeCase{InstanceID: fmt.Sprintf("swebox__stub-%d", i+1), FailToPass: sc.f2p, PassToPass: sc.p2p,
				ModelPatch: &patch, Log: string(raw), parser: sc.parser})
		}
	}
	for i, x := range extras {
		cases = append(cases, gradeCase{InstanceID: fmt.Sprintf("swebox__extra-%d", i+1), FailToPass: x.f2p, PassToPass: x.p2p,
			ModelPatch: &patch, Log: x.log, parser: x.parser})
	}
	cases = append(cases, gradeCase{InstanceID: "swebox__none-1", FailToPass: []string{"t.py::a"}, Log: wrap("PASSED t.py::a\n", "0"), parser: "pytest"})
	for rules, dir := range releases {
		if dir == "" {
			continue
		}
		t.Run(string(rules), func(t *testing.T) {
			for i := range cases {
				c := &cases[i]
				c.Repo, c.Version = officialRepo[c.parser][0], officialRepo[c.parser][1]
				c.LogParser, c.EvalType = "parse_log_"+c.parser, "pass_and_fail"
				if c.FailToPass == nil {
					c.FailToPass = []string{}
				}
				if c.PassToPass == nil {
					c.PassToPass = []string{}
				}
			}
			in, err := json.Marshal(cases)
			require.NoError(t, err)
			cmd := exec.Command(python, "testdata/upstream_grade.py", dir)
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			var want []string
			require.NoError(t, json.Unmarshal(out, &want))
			require.Len(t, want, len(cases))
			for i, c := range cases {
				rep, err := grade.Grade(grade.Input{InstanceID: c.InstanceID, Log: c.Log, Parser: c.parser,
					FailToPass: c.FailToPass, PassToPass: c.PassToPass, Rules: rules, PatchIsNone: c.ModelPatch == nil})
				if strings.HasPrefix(want[i], "error: ") {
					assert.Error(t, err, "%s: upstream raised %s", c.InstanceID, want[i])
					continue
				}
				require.NoError(t, err, c.InstanceID)
				rep.Notes = grade.Notes{} // swebox's own key, which upstream does not write
				assert.Equal(t, want[i], string(rep.Encode()), "%s on %q", c.InstanceID, c.Log)
			}
			t.Logf("%d reports compared with the official code", len(cases))
		})
	}
}
