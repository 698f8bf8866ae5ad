package family

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
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
// ([GradingPolyBench]); the evaluator does the same through the
// row's spec.Procedure ([PolyBenchProcedure]).
func init() {
	grade.RegisterRule(GradingPolyBench, gradePolyBench)
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
		Grading: GradingPolyBench,
	})
}

// PolyBenchCommit is the commit of amazon-science/SWE-PolyBench whose
// parsers and scoring swebox reproduces.
const PolyBenchCommit = "9c836c5d7f3cb991934132b77d29e6941d912a07"

// PolyBenchParserClass is the harness's REPO_TO_PARSER_CLASS
// (constants.py): a repository's parser class.
var PolyBenchParserClass = map[string]string{
	"google/guava":                 ParserJavaGeneric,
	"google/gson":                  ParserJavaGeneric,
	"apache/dubbo":                 ParserJavaGeneric,
	"apolloconfig/apollo":          ParserJavaGeneric,
	"apache/rocketmq":              ParserJavaGeneric,
	"trinodb/trino":                ParserJavaGeneric,
	"mrdoob/three.js":              ParserJavascriptGeneric,
	"sveltejs/svelte":              ParserJavascriptGeneric,
	"prettier/prettier":            ParserJavascriptJestPR,
	"serverless/serverless":        ParserJavascriptMocha,
	"microsoft/vscode":             ParserTypescriptMocha,
	"angular/angular":              ParserTypescriptBazelAngular,
	"mui/material-ui":              ParserTypescriptMochaFile,
	"tailwindlabs/tailwindcss":     ParserTypescriptJestTW,
	"coder/code-server":            ParserTypescriptJest,
	"Significant-Gravitas/AutoGPT": ParserPythonPyUnit,
	"huggingface/transformers":     ParserPythonPyUnit,
	"langchain-ai/langchain":       ParserPythonPyUnit,
	"yt-dlp/yt-dlp":                ParserPythonPyUnit,
	"tensorflow/models":            ParserPythonPyUnit,
	"keras-team/keras":             ParserPythonPyUnit,
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
	ts.Grading = GradingPolyBench
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

// GradingPolyBench is SWE-PolyBench's rule (amazon-science/SWE-PolyBench,
// scoring.py instance_level_scoring, at 9c836c5): the row's parser class
// reads the whole run log; resolved when every F2P test passed and no P2P
// test failed (a P2P test the log does not mention passes).
const GradingPolyBench harness.Grading = "swe-polybench"

// SWE-PolyBench's parser classes (amazon-science/SWE-PolyBench,
// src/poly_bench_evaluation/parsers at 9c836c5), by their class names,
// which are the parser names [GradingPolyBench] takes.
const (
	ParserJavaGeneric            = "JavaGenericParser"
	ParserJavascriptGeneric      = "JavascriptGenericParser"
	ParserJavascriptJestPR       = "JavascriptJestPR"
	ParserJavascriptMocha        = "JavascriptMocha"
	ParserPythonPyUnit           = "PythonPyUnit"
	ParserTypescriptJest         = "TypescriptJest"
	ParserTypescriptJestTW       = "TypescriptJestTW"
	ParserTypescriptMocha        = "TypescriptMocha"
	ParserTypescriptMochaFile    = "TypescriptMochaFileName"
	ParserTypescriptBazelAngular = "TypescriptBazelAngular"
)

// PolyBenchResult is what one of SWE-PolyBench's parser classes returns:
// the passed and failed tests in the order the parser found them,
// duplicates kept. WithLogs is false where the class returns an empty
// dict ({} — the TypeScript classes when their JSON is missing or
// malformed), which its scoring treats as "no logs": nothing passes.
type PolyBenchResult struct {
	Passed, Failed []string
	WithLogs       bool
}

var polyBenchParsers = map[string]func(string) PolyBenchResult{
	ParserJavaGeneric:            parsePolyJava,
	ParserJavascriptGeneric:      parsePolyJSGeneric,
	ParserJavascriptJestPR:       func(s string) PolyBenchResult { return parsePolyJest(s, true, "fullName", true) },
	ParserJavascriptMocha:        func(s string) PolyBenchResult { return parsePolyMocha(s, true) },
	ParserPythonPyUnit:           parsePolyPyUnit,
	ParserTypescriptJest:         func(s string) PolyBenchResult { return parsePolyJest(s, false, "fullName", false) },
	ParserTypescriptJestTW:       func(s string) PolyBenchResult { return parsePolyJest(s, true, "title", true) },
	ParserTypescriptMocha:        func(s string) PolyBenchResult { return parsePolyMocha(s, false) },
	ParserTypescriptMochaFile:    parsePolyMochaFileName,
	ParserTypescriptBazelAngular: parsePolyBazel,
}

// PolyBenchParse runs the SWE-PolyBench parser class named class on a run
// log; ok is false for a class SWE-PolyBench does not have.
func PolyBenchParse(class, log string) (r PolyBenchResult, ok bool) {
	p, ok := polyBenchParsers[class]
	if !ok {
		return PolyBenchResult{}, false
	}
	return p(log), true
}

// gradePolyBench is Grade under SWE-PolyBench's rule (scoring.py
// instance_level_scoring at 9c836c5): the parser class reads the whole
// run log; a result with logs resolves when every F2P test is among the
// passed and no P2P test among the failed — a P2P test the log does not
// mention counts as passing, and a test both passed and failed passes
// for F2P and fails for P2P.
func gradePolyBench(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, harness.V4, GradingPolyBench)
	if done {
		return rep, nil
	}
	res, ok := PolyBenchParse(in.Parser, in.Log)
	if !ok {
		return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: in.Parser})
	}
	rep.PatchSuccessfullyApplied = true
	sm := logparse.StatusMap{}
	for _, t := range res.Failed {
		sm[t] = logparse.FAILED
	}
	for _, t := range res.Passed {
		sm[t] = logparse.PASSED
	}
	rep.StatusMap = sm
	if !res.WithLogs {
		rep.Evaluation.Reason = grade.ReasonNoTestsRan
		return rep, nil
	}
	rep.Evaluation.Usable, rep.Evaluation.WholeLog = true, true
	passed, failed := map[string]bool{}, map[string]bool{}
	for _, t := range res.Passed {
		passed[t] = true
	}
	for _, t := range res.Failed {
		failed[t] = true
	}
	var ts grade.TestsStatus
	for _, t := range in.FailToPass {
		if passed[t] {
			ts.FailToPass.Success = append(ts.FailToPass.Success, t)
		} else {
			ts.FailToPass.Failure = append(ts.FailToPass.Failure, t)
		}
	}
	for _, t := range in.PassToPass {
		if failed[t] {
			ts.PassToPass.Failure = append(ts.PassToPass.Failure, t)
		} else {
			ts.PassToPass.Success = append(ts.PassToPass.Success, t)
		}
	}
	rep.TestsStatus = &ts
	rep.Resolved = len(ts.FailToPass.Failure) == 0 && len(ts.PassToPass.Failure) == 0
	return rep, nil
}

// Python's re on str is Unicode-aware where Go's RE2 classes are ASCII:
// these stand in for \w, \d and \s inside a character class.
const (
	pyW = `\p{L}\p{N}_`
	pyD = `\p{Nd}`
	pyS = `\t\n\v\f\r \x1c-\x1f\x85\p{Z}`
)

// pyRE compiles a Python pattern written with \w, \d and \s, each
// replaced by its Unicode class.
func pyRE(p string) *regexp.Regexp {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			var cls string
			switch p[i+1] {
			case 'w':
				cls = pyW
			case 'd':
				cls = pyD
			case 's':
				cls = pyS
			}
			if cls != "" {
				if inClass {
					b.WriteString(cls)
				} else {
					b.WriteString("[" + cls + "]")
				}
			} else {
				b.WriteByte(c)
				b.WriteByte(p[i+1])
			}
			i++
			continue
		}
		switch c {
		case '[':
			inClass = true
		case ']':
			inClass = false
		}
		b.WriteByte(c)
	}
	return regexp.MustCompile(b.String())
}

// --- JavaGenericParser ---

var (
	polyJavaReadFile   = pyRE(`\+ read -r file\s*`)
	polyJavaBuild      = regexp.MustCompile(`(?i)build failure`)
	polyJavaCompile    = regexp.MustCompile(`(?i)compilation error`)
	polyJavaTestFail   = regexp.MustCompile(`(?i)there are test failures`)
	polyJavaTestsuites = regexp.MustCompile(`(?s)(<testsuite[^>]*>.*?</testsuite>)`)
)

func parsePolyJava(log string) PolyBenchResult {
	// re.sub(pattern, "", content, re.DOTALL): the flag lands in count,
	// so only the first 16 occurrences go.
	n := 0
	log = polyJavaReadFile.ReplaceAllStringFunc(log, func(m string) string {
		if n++; n <= 16 {
			return ""
		}
		return m
	})
	r := PolyBenchResult{WithLogs: true}
	if (polyJavaBuild.MatchString(log) || polyJavaCompile.MatchString(log)) && !polyJavaTestFail.MatchString(log) {
		return r
	}
	for _, x := range polyJavaTestsuites.FindAllString(log, -1) {
		p, f := polyJavaSuite(x)
		r.Failed = append(r.Failed, f...)
		r.Passed = append(r.Passed, p...)
	}
	return r
}

// xmlNode is an element of ElementTree's tree: enough to find testcases
// and their direct children.
type xmlNode struct {
	name     string
	attrs    map[string]string
	children []*xmlNode
}

// parseXMLStrict parses one XML document as ElementTree.fromstring does:
// any well-formedness error, or anything but whitespace, comments and
// processing instructions outside the root element, fails.
func parseXMLStrict(s string) (*xmlNode, error) {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	var root *xmlNode
	var stack []*xmlNode
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, errors.New("junk after document element")
			}
			n := &xmlNode{name: qname(t.Name), attrs: map[string]string{}}
			for _, a := range t.Attr {
				k := qname(a.Name)
				if _, dup := n.attrs[k]; dup {
					return nil, errors.New("duplicate attribute")
				}
				n.attrs[k] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != qname(t.Name) {
				return nil, errors.New("mismatched tag")
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 && len(bytes.TrimLeft(t, " \t\r\n")) > 0 {
				return nil, errors.New("text outside the root element")
			}
		case xml.Directive:
			if root != nil {
				return nil, errors.New("directive after the root element")
			}
		}
	}
	if root == nil || len(stack) > 0 {
		return nil, errors.New("no element found")
	}
	return root, nil
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

func polyJavaSuite(x string) (passed, failed []string) {
	root, err := parseXMLStrict(x)
	if err != nil {
		return nil, nil
	}
	hasChild := func(n *xmlNode, name string) bool {
		for _, c := range n.children {
			if c.name == name {
				return true
			}
		}
		return false
	}
	var walk func(n *xmlNode)
	walk = func(n *xmlNode) {
		for _, c := range n.children {
			if c.name == "testcase" {
				name, ok := c.attrs["name"]
				if !ok {
					name = "None"
				}
				if cls, ok := c.attrs["classname"]; ok {
					name = cls + "." + name
				}
				switch {
				case hasChild(c, "failure") || hasChild(c, "error"):
					failed = append(failed, name)
				case hasChild(c, "skipped"):
				default:
					passed = append(passed, name)
				}
			}
			walk(c)
		}
	}
	walk(root)
	return passed, failed
}

// --- the JSON parsers (Mocha, Jest) ---

var (
	polyStats      = pyRE(`{\s*"stats"`)
	polyJestStart  = pyRE(`{\s*"numFailedTestSuites"`)
	polyJestEnd    = regexp.MustCompile(`"wasInterrupted":(true|false)}`)
	polyJSReporter = regexp.MustCompile(`(?m)(^>.*--reporter json)`)
	polyTAP        = pyRE(`(?m)^TAP\sversion\s\d+`)
)

// errPy stands for any exception a class's helper raises (KeyError,
// TypeError), which the class catches.
var errPy = errors.New("python exception")

// polyJSONUntilExit is the JSON the Mocha classes cut out: from the
// start pattern to the last "}" before "Container exited" (or before the
// log's last character, content.find's -1 taken as an end); nil where
// the pattern is missing or json.loads raises.
func polyJSONUntilExit(log string, start *regexp.Regexp) any {
	loc := start.FindStringIndex(log)
	if loc == nil {
		return nil
	}
	js := loc[0]
	end := strings.Index(log[js:], "Container exited")
	if end >= 0 {
		end += js
	} else {
		end = len(log) - lastRuneLen(log)
	}
	if end < js {
		return nil
	}
	sub := log[js:end]
	i := strings.LastIndex(sub, "}")
	if i < 0 {
		return nil
	}
	v, err := pyJSONLoads(sub[:i+1])
	if err != nil {
		return nil
	}
	return v
}

func lastRuneLen(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return len(s) - i
		}
	}
	return len(s)
}

// pyJSONLoads is json.loads: numbers kept as json.Number (Python's int or
// float), NaN and Infinity accepted as Python accepts them.
func pyJSONLoads(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("extra data")
	}
	return v, nil
}

// pyTruthy is Python's bool() of a decoded JSON value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	}
	return true
}

// pyIter is Python's iteration of a JSON value: a list's elements, a
// dict's keys, a string's characters; a number, bool or None raises.
func pyIter(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case map[string]any:
		out := make([]any, 0, len(x))
		for k := range x {
			out = append(out, k)
		}
		return out, nil
	case string:
		var out []any
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	}
	return nil, errPy
}

// pyGet is v[key] for a dict v; anything else raises (a list or string
// indexed by a string raises TypeError, a missing key KeyError).
func pyGet(v any, key string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errPy
	}
	x, ok := m[key]
	if !ok {
		return nil, errPy
	}
	return x, nil
}

// pyFormat is f"{v}" of a decoded JSON value.
func pyFormat(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case json.Number:
		return pyNumber(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		// Python keeps the document's key order; Go's map does not:
		// such a title is out of what this port reproduces.
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, pyRepr(k)+": "+pyRepr(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
			return `"` + s + `"`
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	return pyFormat(v)
}

func pyNumber(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	// Python's repr: the shortest round-trip digits, positional from
	// 1e-4 up to 1e16, else exponent form with at least two digits.
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e16) {
		r := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(r, ".") {
			r += ".0"
		}
		return r
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}

// pyEqual is == between a decoded JSON value and a string.
func pyEqual(v any, s string) bool {
	x, ok := v.(string)
	return ok && x == s
}

func polyMochaHelper(obj any) (PolyBenchResult, error) {
	r := PolyBenchResult{WithLogs: true}
	for _, key := range []string{"passes", "failures"} {
		list, err := pyGet(obj, key)
		if err != nil {
			return r, err
		}
		items, err := pyIter(list)
		if err != nil {
			return r, err
		}
		for _, t := range items {
			title, err := pyGet(t, "fullTitle")
			if err != nil {
				return r, err
			}
			if key == "passes" {
				r.Passed = append(r.Passed, pyFormat(title))
			} else {
				r.Failed = append(r.Failed, pyFormat(title))
			}
		}
	}
	return r, nil
}

// parsePolyMocha is JavascriptMocha (js) and TypescriptMocha: on a
// helper's exception the first gives an empty result, the second {}.
func parsePolyMocha(log string, js bool) PolyBenchResult {
	obj := polyJSONUntilExit(log, polyStats)
	if js && !pyTruthy(obj) {
		return PolyBenchResult{WithLogs: true}
	}
	r, err := polyMochaHelper(obj)
	if err != nil {
		return PolyBenchResult{WithLogs: js}
	}
	return r
}

func parsePolyMochaFileName(log string) PolyBenchResult {
	obj := polyJSONUntilExit(log, polyStats)
	r := PolyBenchResult{WithLogs: true}
	fail := func() PolyBenchResult { return PolyBenchResult{} }
	tests, err := pyGet(obj, "tests")
	if err != nil {
		return fail()
	}
	items, err := pyIter(tests)
	if err != nil {
		return fail()
	}
	for _, t := range items {
		file, err := pyGet(t, "file")
		if err != nil {
			return fail()
		}
		title, err := pyGet(t, "fullTitle")
		if err != nil {
			return fail()
		}
		status, err := pyGet(t, "status")
		if err != nil {
			return fail()
		}
		name := pyFormat(file) + "->" + pyFormat(title)
		switch {
		case pyEqual(status, "passed"):
			r.Passed = append(r.Passed, name)
		case pyEqual(status, "failed"):
			r.Failed = append(r.Failed, name)
		}
	}
	return r
}

// parsePolyJest is JavascriptJestPR (endPattern, the fullName-or-title
// name, an empty result on a helper's exception), TypescriptJestTW
// (endPattern, the title, an empty result) and TypescriptJest (cut at
// "Container exited", fullName, {}).
func parsePolyJest(log string, endPattern bool, nameKey string, emptyOnError bool) PolyBenchResult {
	var obj any
	if endPattern {
		if loc := polyJestStart.FindStringIndex(log); loc != nil {
			if m := polyJestEnd.FindStringIndex(log[loc[0]:]); m != nil {
				if v, err := pyJSONLoads(log[loc[0] : loc[0]+m[1]]); err == nil {
					obj = v
				}
			}
		}
	} else {
		obj = polyJSONUntilExit(log, polyJestStart)
	}
	fail := func() PolyBenchResult { return PolyBenchResult{WithLogs: emptyOnError} }
	// JavascriptJestPR calls its helper only on a truthy object; the
	// others call it on None too, which raises.
	if nameKey == "fullName" && emptyOnError && !pyTruthy(obj) {
		return fail()
	}
	r := PolyBenchResult{WithLogs: true}
	suites, err := pyGet(obj, "testResults")
	if err != nil {
		return fail()
	}
	items, err := pyIter(suites)
	if err != nil {
		return fail()
	}
	for _, s := range items {
		file, err := pyGet(s, "name")
		if err != nil {
			return fail()
		}
		asserts, err := pyGet(s, "assertionResults")
		if err != nil {
			return fail()
		}
		list, err := pyIter(asserts)
		if err != nil {
			return fail()
		}
		for _, a := range list {
			key := nameKey
			if nameKey == "fullName" && emptyOnError {
				// JavascriptJestPR: fullName if "fullName" in assertion
				// else title ("in" on a list or string tests membership).
				if !pyContains(a, "fullName") {
					key = "title"
				}
			}
			title, err := pyGet(a, key)
			if err != nil {
				return fail()
			}
			status, err := pyGet(a, "status")
			if err != nil {
				return fail()
			}
			name := pyFormat(file) + "->" + pyFormat(title)
			switch {
			case pyEqual(status, "passed"):
				r.Passed = append(r.Passed, name)
			case pyEqual(status, "failed"):
				r.Failed = append(r.Failed, name)
			}
		}
	}
	return r
}

func pyContains(v any, s string) bool {
	switch x := v.(type) {
	case map[string]any:
		_, ok := x[s]
		return ok
	case []any:
		for _, e := range x {
			if pyEqual(e, s) {
				return true
			}
		}
	case string:
		return strings.Contains(x, s)
	}
	return false
}

func parsePolyJSGeneric(log string) PolyBenchResult {
	if m := polyJSReporter.FindAllString(log, -1); len(m) > 0 && strings.Contains(m[0], "mocha") {
		return parsePolyMocha(log, true)
	}
	r := PolyBenchResult{WithLogs: true}
	if polyTAP.MatchString(log) {
		for _, line := range strings.Split(log, "\n") {
			if strings.HasPrefix(line, "ok ") {
				r.Passed = append(r.Passed, line[3:])
			}
			if strings.HasPrefix(line, "not ok ") {
				r.Failed = append(r.Failed, line[7:])
			}
		}
	}
	return r
}

// --- TypescriptBazelAngular ---

func parsePolyBazel(log string) PolyBenchResult {
	r := PolyBenchResult{WithLogs: true}
	clean := strings.NewReplacer("\x1b[0m", "", "\x1b[32m", "", "\x1b[31m", "", "\x1b[1m", "")
	for _, line := range strings.Split(log, "\n") {
		if pyStripUnicode(line) == "" {
			continue
		}
		c := clean.Replace(line)
		if !strings.Contains(c, "PASSED") && !strings.Contains(c, "FAILED") {
			continue
		}
		var name string
		if strings.Contains(c, "PASSED") {
			name = strings.SplitN(c, "PASSED", 2)[0]
		} else {
			name = strings.SplitN(c, "FAILED", 2)[0]
		}
		if strings.HasPrefix(name, "//") {
			name = name[1:]
		}
		switch {
		case strings.Contains(line, "PASSED"):
			r.Passed = append(r.Passed, pyStripUnicode(name))
		case strings.Contains(line, "FAILED"):
			r.Failed = append(r.Failed, pyStripUnicode(name))
		}
	}
	return r
}

// pyStripUnicode is str.strip() on any text: Python's whitespace is Go's plus the
// information separators \x1c-\x1f.
func pyStripUnicode(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// --- PythonPyUnit ---

var (
	polyPytestStd = pyRE(`([\w/]+\.py)::(?:([\w]+)::)?([\w_]+(?:\[[\w\-\d]+\])?)(?:\s<-\s[\w/]+\.py)?(?:[\s\S]*?)(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)`)
	polyPytestRev = pyRE(`(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\s([\w/]+\.py)::(?:([\w]+)::)?([\w_]+(?:\[[\w\-\d]+\])?)(?:\s<-\s[\w/]+\.py)?`)
	polyUnittest  = pyRE(`(?:` +
		`(?:(\w+) \(([\w.]+)\)\n.*\n)?(\w+)(?: \(([\w.]+)\))?(?:\((.+?)\))? \.{3} (?:.*\n)*?(ok|FAIL|ERROR|skipped|expected failure|unexpected success)` +
		`|` +
		`(FAIL|ERROR|skipped|expected failure|unexpected success): (\w+)(?: \(([\w.]+)\))?(?:\((.+?)\))?` +
		`)`)
)

func parsePolyPyUnit(log string) PolyBenchResult {
	r := PolyBenchResult{WithLogs: true}
	none := func(s string) string {
		if s == "" {
			return "None"
		}
		return s
	}
	if strings.Contains(log, "= test session starts =") || strings.Contains(log, "= short test summary info =") {
		out := polyExtractPytest(log)
		type test struct{ file, class, name, status string }
		var tests []test
		for _, m := range polyPytestStd.FindAllStringSubmatch(out, -1) {
			tests = append(tests, test{none(m[1]), none(m[2]), none(m[3]), none(m[4])})
		}
		if len(tests) == 0 {
			for _, m := range polyPytestRev.FindAllStringSubmatch(out, -1) {
				tests = append(tests, test{none(m[2]), none(m[3]), none(m[4]), none(m[1])})
			}
		}
		for _, t := range tests {
			s := t.file + ":" + t.class + ":" + t.name
			switch t.status {
			case "PASSED":
				r.Passed = append(r.Passed, s)
			case "FAILED":
				r.Failed = append(r.Failed, s)
			}
		}
		return r
	}
	for _, m := range polyUnittest.FindAllStringSubmatch(log, -1) {
		name, cls := m[3], m[4]
		if m[1] != "" && m[2] != "" {
			name, cls = m[1], m[2]
		}
		s := cls + ":" + name + ":" + m[5]
		switch m[6] {
		case "ok":
			r.Passed = append(r.Passed, s)
		case "FAIL":
			r.Failed = append(r.Failed, s)
		}
	}
	return r
}

func polyExtractPytest(out string) string {
	test := strings.Index(out, "===== test session starts =====")
	warn := strings.Index(out, "===== warnings summary =====")
	summary := strings.Index(out, "===== short test summary info =====")
	collecting := strings.Index(out, "collecting ...")
	if test == -1 && collecting == -1 && summary != -1 {
		if warn > summary {
			return pyStripUnicode(out[summary:warn])
		}
		return pyStripUnicode(out[summary:])
	}
	start := -1
	for _, i := range []int{collecting, test} {
		if i != -1 && (start == -1 || i < start) {
			start = i
		}
	}
	if start == -1 {
		return ""
	}
	end := -1
	for _, i := range []int{warn, summary} {
		if i != -1 && (end == -1 || i < end) {
			end = i
		}
	}
	if end == -1 {
		return out[start:]
	}
	if end < start {
		// Python's out[start:end] with end before start is "".
		return ""
	}
	return pyStripUnicode(out[start:end])
}
