package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench-Live (Linux): rows carry their own commands (test_cmds,
// rebuild_cmds, print_cmds), log parser and image (docker_image, else
// starryzhang/sweb.eval.x86_64.<id> named as the official images), and
// are graded by Live's rule (harness.GradingLive). Its harness is
// microsoft/SWE-bench-Live's evaluation/evaluation.py with RepoLaunch
// (launch/, microsoft/RepoLaunch at 7735b1e) as its runtime.
func init() {
	Register(&Family{
		Name:    "swe-bench-live",
		Aliases: []string{"live"},
		Title:   "SWE-bench-Live",
		Datasets: []Dataset{
			{ID: "SWE-bench-Live/SWE-bench-Live", Splits: []string{"full", "lite", "verified"}},
			{ID: "SWE-bench-Live/MultiLang"},
		},
		Upstream:  Upstream{Repository: "microsoft/SWE-bench-Live", Commit: "70ec57e852e3f2d195790fe71f553e272c691833"},
		Namespace: "starryzhang",
		Claim: func(inst dataset.Instance) Claim {
			if _, ok := inst.Extra["test_cmds"]; ok {
				return ClaimRow
			}
			return ClaimNone
		},
		Spec:    liveSpec,
		Grading: harness.GradingLive,
	})
}

// ErrParserScript is a row whose log parser is a Python program (Live's
// RepoLaunch parsers, which its harness exec()s on the host): swebox does
// not run a row's Python on the host, and running it in a sandbox is not
// built yet.
var ErrParserScript = errors.New("the row's log parser is a Python program")

// liveSpec is Live's evaluate_instance as an eval script: the test patch
// applied as RepoLaunch applies patches, the rebuild commands, the test
// commands, then the print commands' output between the markers (what
// Live parses). Without print commands the test commands go to
// run_test.sh, run with their output in testlog.out, which is printed, as
// Live does for its Python rows. The commands run with -u and pipefail
// off, as in Live's interactive shell.
func liveSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	var cmds [3][]string
	for i, field := range []string{"test_cmds", "rebuild_cmds", "print_cmds"} {
		list, err := liveList(inst.Extra[field])
		if err != nil {
			return spec.TestSpec{}, fmt.Errorf("spec for %s: field %s: %w", inst.InstanceID, field, err)
		}
		cmds[i] = list
	}
	test, rebuild, print := strings.Join(cmds[0], " ; "), strings.Join(cmds[1], " ; "), strings.Join(cmds[2], " ; ")
	parser := inst.LogParser
	if parser == "" {
		// evaluation.py: instance.get("log_parser", instance.get("parser", ""))
		var p string
		if raw, ok := inst.Extra["parser"]; ok && json.Unmarshal(raw, &p) == nil {
			parser = p
		}
	}
	if strings.ToLower(strings.TrimSpace(parser)) != harness.ParserPytest {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, ErrParserScript)
	}
	lines := []string{
		"set +u +o pipefail",
		"cd " + harness.RepoDir,
		"git apply --reject --whitespace=nowarn - <<'" + spec.HeredocDelimiter + "'\n" + inst.TestPatch + "\n" + spec.HeredocDelimiter,
	}
	if strings.TrimSpace(rebuild) != "" {
		lines = append(lines, rebuild)
	}
	if strings.TrimSpace(print) == "" {
		lines = append(lines, "cat > run_test.sh <<'CC_PROMPT'\n"+test+"\nCC_PROMPT", "bash run_test.sh > testlog.out 2>&1")
		print = "cat testlog.out"
	} else {
		lines = append(lines, test)
	}
	lines = append(lines,
		"{ set +x; } 2>/dev/null",
		"echo '"+harness.StartTestOutput+"'",
		print,
		"echo '"+harness.EndTestOutput+"'",
	)
	row := inst
	row.EvalScript = strings.Join(lines, "\n")
	row.LogParser = harness.ParserPytest
	row.EvalType = dataset.EvalTypePassAndFail
	if img, ok := inst.Extra["docker_image"]; ok {
		var s string
		if json.Unmarshal(img, &s) == nil {
			row.Image = s
		}
	}
	ts, err := spec.For(row, opts...)
	if err != nil {
		return ts, err
	}
	ts.Grading = harness.GradingLive
	return ts, nil
}

// liveList reads a list of strings, or a string holding one (the Hub's
// Parquet form), or nothing.
func liveList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want a list of strings, got %s", dataset.JSONKind(raw))
	}
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, fmt.Errorf("want a list of strings, got a string that holds none")
	}
	return list, nil
}
