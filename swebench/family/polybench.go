package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-PolyBench (Amazon; Java, JavaScript, TypeScript, Python): each row
// carries its own Dockerfile and test_command, its tests as F2P and P2P
// (Python list literals), and its repository picks one of the harness's
// parser classes (REPO_TO_PARSER_CLASS). Its harness
// (amazon-science/SWE-PolyBench, run_evaluation.py) runs the row's image —
// ghcr.io/timesler/swe-polybench.eval.x86_64.<lower-cased id>:latest, else
// one built from the row's Dockerfile over a checkout at base_commit —
// applies the test patch, then the model patch (git apply -v
// --ignore-whitespace --reject, else patch --batch --fuzz=5 -p1 -f -i),
// runs "#!/bin/bash\nset -uxo pipefail\n<test_command>" in the image's
// working directory and grades the whole log by its own rule
// ([harness.GradingPolyBench]); the evaluator does the same through the
// row's spec.Procedure ([PolyBenchProcedure]).
func init() {
	Register(&Family{
		Name:    "swe-polybench",
		Aliases: []string{"polybench"},
		Title:   "SWE-PolyBench",
		Datasets: []Dataset{
			{ID: "AmazonScience/SWE-PolyBench", Splits: []string{"test"}},
			{ID: "AmazonScience/SWE-PolyBench_500", Aliases: []string{"PB500"}, Splits: []string{"test"}},
			{ID: "AmazonScience/SWE-PolyBench_Verified", Splits: []string{"test"}},
		},
		Upstream:  Upstream{Repository: "amazon-science/SWE-PolyBench", Commit: PolyBenchCommit},
		Namespace: "ghcr.io/timesler",
		Image:     PolyBenchImage,
		Claim: func(inst dataset.Instance) Claim {
			if isPolyBenchRow(inst) {
				return ClaimRow
			}
			return ClaimNone
		},
		Spec:    polyBenchSpec,
		Grading: harness.GradingPolyBench,
	})
}

// PolyBenchCommit is the commit of amazon-science/SWE-PolyBench whose
// parsers and scoring swebox reproduces.
const PolyBenchCommit = "9c836c5d7f3cb991934132b77d29e6941d912a07"

// PolyBenchParserClass is the harness's REPO_TO_PARSER_CLASS
// (constants.py): a repository's parser class.
var PolyBenchParserClass = map[string]string{
	"google/guava":                 grade.ParserJavaGeneric,
	"google/gson":                  grade.ParserJavaGeneric,
	"apache/dubbo":                 grade.ParserJavaGeneric,
	"apolloconfig/apollo":          grade.ParserJavaGeneric,
	"apache/rocketmq":              grade.ParserJavaGeneric,
	"trinodb/trino":                grade.ParserJavaGeneric,
	"mrdoob/three.js":              grade.ParserJavascriptGeneric,
	"sveltejs/svelte":              grade.ParserJavascriptGeneric,
	"prettier/prettier":            grade.ParserJavascriptJestPR,
	"serverless/serverless":        grade.ParserJavascriptMocha,
	"microsoft/vscode":             grade.ParserTypescriptMocha,
	"angular/angular":              grade.ParserTypescriptBazelAngular,
	"mui/material-ui":              grade.ParserTypescriptMochaFile,
	"tailwindlabs/tailwindcss":     grade.ParserTypescriptJestTW,
	"coder/code-server":            grade.ParserTypescriptJest,
	"Significant-Gravitas/AutoGPT": grade.ParserPythonPyUnit,
	"huggingface/transformers":     grade.ParserPythonPyUnit,
	"langchain-ai/langchain":       grade.ParserPythonPyUnit,
	"yt-dlp/yt-dlp":                grade.ParserPythonPyUnit,
	"tensorflow/models":            grade.ParserPythonPyUnit,
	"keras-team/keras":             grade.ParserPythonPyUnit,
}

// ErrPolyBenchRow is a SWE-PolyBench row its harness would not run: a
// repository without a parser class (run_evaluation raises ValueError),
// no test_command, or F2P/P2P that are not lists of strings.
var ErrPolyBenchRow = errors.New("the SWE-PolyBench row cannot be run as its harness runs it")

// PolyBenchImage is the harness's try_pull_prebuilt_image name:
// <namespace>/swe-polybench.eval.x86_64.<lower-cased id>:<tag>.
func PolyBenchImage(instanceID, namespace, tag string) string {
	if tag == "" {
		tag = "latest"
	}
	name := "swe-polybench.eval.x86_64." + strings.ToLower(instanceID) + ":" + tag
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func isPolyBenchRow(inst dataset.Instance) bool {
	_, df := inst.Extra["Dockerfile"]
	_, tc := inst.Extra["test_command"]
	_, f2p := inst.Extra["F2P"]
	return df && tc && f2p
}

// PolyBenchScript is the eval.sh the harness writes (docker_run): the
// header and the row's test command, nothing else.
func PolyBenchScript(testCommand string) string {
	return "#!/bin/bash\nset -uxo pipefail\n" + testCommand
}

// polyBenchSpec gives the row's image (prebuilt, or built from its
// Dockerfile: Extra["Dockerfile"]), its test command and parser class.
// The eval script is the test command under the harness's header; the
// harness's patch steps are the procedure's ([PolyBenchProcedure]).
func polyBenchSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	class, ok := PolyBenchParserClass[inst.Repo]
	if !ok {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: no parser class for repository %q", inst.InstanceID, ErrPolyBenchRow, inst.Repo)
	}
	var cmd string
	if err := json.Unmarshal(inst.Extra["test_command"], &cmd); err != nil || strings.TrimSpace(cmd) == "" {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: test_command is missing or not a string", inst.InstanceID, ErrPolyBenchRow)
	}
	var lists [2][]string
	for i, key := range []string{"F2P", "P2P"} {
		if raw, ok := inst.Extra[key]; ok {
			l, err := polyBenchTests(raw)
			if err != nil {
				return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: %s: %v", inst.InstanceID, ErrPolyBenchRow, key, err)
			}
			lists[i] = append([]string{}, l...)
		}
	}
	row := inst
	row.EvalScript = PolyBenchScript(cmd)
	row.LogParser = class
	ts, err := spec.For(row, opts...)
	if err != nil {
		return ts, err
	}
	ts.TestCmd, ts.Directives, ts.TestFiles = cmd, nil, nil
	ts.Install, ts.PreInstall, ts.EvalCommands, ts.Python, ts.NanoCPUs = "", nil, nil, "", 0
	ts.Conda = false
	ts.EvalType = dataset.EvalTypePassAndFail
	ts.Grading = harness.GradingPolyBench
	// The harness grades by F2P and P2P (ast.literal_eval of the row's
	// Python list literals).
	ts.FailToPass, ts.PassToPass = lists[0], lists[1]
	ts.Source = spec.SourceRow
	ts.Run = PolyBenchProcedure(polyBenchWorkdir(inst))
	ts.Notes = append(ts.Notes[:0:0], "test command, image and parser class ("+class+") from the SWE-PolyBench row",
		"run as SWE-PolyBench's harness runs it in "+ts.Run.Dir()+": the test patch, then the model patch, then the test command; the log is stderr, then stdout")
	return ts, nil
}

// PolyBenchProcedure is how the harness runs a row (run_evaluation.py
// evaluate_instance and DockerManager at [PolyBenchCommit]) in the image's
// working directory workdir: the test patch, then the model patch, each
// with apply_patch_to_container's two commands, as root; a patch that
// does not apply is graded unresolved (patch_applied False, no logs);
// docker_run's log is the eval script's stderr, then its stdout, then its
// exit status twice.
func PolyBenchProcedure(workdir string) spec.Procedure {
	return spec.Procedure{
		Workdir: workdir,
		PatchCommands: [][]string{
			{"git", "apply", "-v", "--ignore-whitespace", "--reject"},
			{"patch", "--batch", "--fuzz=5", "-p1", "-f", "-i"},
		},
		TestPatchFirst:     true,
		PatchFailureGraded: true,
		Log:                spec.LogStderrFirst,
	}
}

// polyBenchWorkdir is the working directory of the row's image, which the
// harness reads from the image (_get_workdir_from_image): the last
// absolute WORKDIR of the row's Dockerfile, from which the prebuilt image
// is built too; "" (/testbed) without one.
func polyBenchWorkdir(inst dataset.Instance) string {
	var df string
	if json.Unmarshal(inst.Extra["Dockerfile"], &df) != nil {
		return ""
	}
	dir := ""
	for _, line := range strings.Split(df, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.EqualFold(f[0], "WORKDIR") && strings.HasPrefix(f[1], "/") {
			dir = path.Clean(f[1])
		}
	}
	return dir
}

// polyBenchTests reads F2P or P2P: a list of strings, or a string holding
// a Python list literal of strings ("['a', \"b'c\"]").
func polyBenchTests(raw json.RawMessage) ([]string, error) {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a list or a string")
	}
	return pyStringList(s)
}

// pyStringList parses a Python list literal of string literals, as
// ast.literal_eval does for the forms Python's repr writes (single or
// double quotes, the common escapes, adjacent literals concatenated).
func pyStringList(s string) ([]string, error) {
	p := strings.TrimSpace(s)
	if !strings.HasPrefix(p, "[") || !strings.HasSuffix(p, "]") {
		return nil, fmt.Errorf("%q is not a Python list", clipStr(s))
	}
	p = p[1 : len(p)-1]
	var out []string
	i := 0
	skip := func() {
		for i < len(p) && strings.ContainsRune(" \t\r\n", rune(p[i])) {
			i++
		}
	}
	for {
		skip()
		if i >= len(p) {
			return out, nil
		}
		var item strings.Builder
		n := 0
		for i < len(p) && (p[i] == '\'' || p[i] == '"') {
			q := p[i]
			j := i + 1
			for j < len(p) && p[j] != q {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p) {
				return nil, fmt.Errorf("unterminated string in %q", clipStr(s))
			}
			lit := p[i+1 : j]
			if q == '\'' {
				lit = strings.ReplaceAll(strings.ReplaceAll(lit, `\'`, `'`), `"`, `\"`)
			}
			v, err := strconv.Unquote(`"` + lit + `"`)
			if err != nil {
				return nil, fmt.Errorf("string literal %q: %v", clipStr(lit), err)
			}
			item.WriteString(v)
			n++
			i = j + 1
			skip()
		}
		if n == 0 {
			return nil, fmt.Errorf("%q holds something other than strings", clipStr(s))
		}
		out = append(out, item.String())
		if i < len(p) {
			if p[i] != ',' {
				return nil, fmt.Errorf("%q: expected a comma", clipStr(s))
			}
			i++
		}
	}
}

func clipStr(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
