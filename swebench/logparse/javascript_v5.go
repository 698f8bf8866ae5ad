package logparse

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/swebox/swebox/swebench/harness"
)

// Parsers of the JavaScript repositories that SWE-bench 5.0.2 added to
// javascript.py (SWE-bench Multimodal's Mocha, Karma, Jest, Cypress and
// Deno suites). They are the same under both rule sets: v4.1.0 has none of
// them, and a row that names one runs it as 5.0.2 wrote it.

// remove removes every match of re from s.
func remove(re *regexp.Regexp, s string) string { return re.ReplaceAllLiteralString(s, "") }

// collapseSpace is re.sub(r"\s+", " ", s).strip().
func collapseSpace(s string) string { return strip(spaceRun.ReplaceAllLiteralString(s, " ")) }

var spaceRun = regexp.MustCompile(reSpace + `+`)

// after is s.split(sep)[-1]: the text after the last sep, or s.
func after(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return s
}

// beforeLast is s.rsplit(sep, 1)[0]: the text before the last sep, or s.
func beforeLast(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i]
	}
	return s
}

var (
	highlightjsSummary = regexp.MustCompile(`\n[ \t]*` + reDigit + `+ passing`)
	mochaTiming        = regexp.MustCompile(`\(` + reDigit + `+ms\)`)
	highlightjsFailure = regexp.MustCompile(`^` + reDigit + `+\)`)
)

// parseHighlightjs is parse_log_highlightjs, for Mocha's spec reporter:
// the log is cut at the first "N passing" summary line; "✓"/"✔" lines
// pass and "N) name" lines fail, each named "suite.name" after the latest
// line indented by two or more spaces, timings "(12ms)" removed. Only one
// suite level is kept: the official branch for deeper suites can never
// run, so a nested suite replaces its parent.
func parseHighlightjs(log string, _ harness.Rules) (StatusMap, error) {
	if loc := highlightjsSummary.FindStringIndex(log); loc != nil {
		log = log[:loc[0]]
	}
	name := func(s string) string { return strip(remove(mochaTiming, s)) }
	m := StatusMap{}
	var suite []string
	for _, line := range lines(log) {
		stripped := strip(line)
		switch {
		case strings.HasPrefix(stripped, "✓"), strings.HasPrefix(stripped, "✔"):
			check := "✓"
			if !strings.HasPrefix(stripped, check) {
				check = "✔"
			}
			_, rest, _ := strings.Cut(line, check)
			m[strings.Join(append(suite[:len(suite):len(suite)], name(rest)), ".")] = PASSED
		case highlightjsFailure.MatchString(stripped):
			_, rest, _ := strings.Cut(line, ")")
			m[strings.Join(append(suite[:len(suite):len(suite)], name(rest)), ".")] = FAILED
		case strings.HasPrefix(line, "  "):
			suite = []string{stripped}
		}
	}
	return m, nil
}

// prismjsCommand is the one test command of every PrismJS version, which
// 5.0.2 hard-codes because it appears verbatim in the traced eval script.
const prismjsCommand = "./node_modules/.bin/mocha tests/run.js --reporter json"

// parsePrismjs is parse_log_prismjs, for Mocha's JSON reporter: after each
// traced test command, the text from its first "{" to its last "}" is read
// as JSON; "failures" are FAILED, then "passes" PASSED, keyed by
// fullTitle. Text that is not such a document raises in the official code.
func parsePrismjs(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for i, run := range strings.Split(log, prismjsCommand)[1:] {
		_, body, found := strings.Cut(run, "{")
		if !found {
			body = run
		}
		doc, err := decodeObject("{" + beforeLast(body, "}") + "}")
		if err != nil {
			return nil, raised(harness.ParserPrismjs, i, err.Error())
		}
		for _, key := range []string{"failures", "passes"} {
			status := map[string]Status{"failures": FAILED, "passes": PASSED}[key]
			if err := mochaTitles(doc, key, status, m); err != nil {
				return nil, raised(harness.ParserPrismjs, i, err.Error())
			}
		}
	}
	return m, nil
}

// decodeObject is json.loads of a document that must be an object for the
// official code to index it. (Python also reads NaN and Infinity, which
// Mocha's JSON reporter never writes.)
func decodeObject(text string) (map[string]any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return obj, nil
}

var (
	errNotObject = errors.New("not a JSON object where the official code indexes one")
	errNoTitle   = errors.New("missing key the official code indexes")
)

// mochaTitles is `for test in doc[key]: m[test["fullTitle"]] = status`.
// A missing key, a test that is not an object or lacks fullTitle raises
// (KeyError, TypeError); an empty string or object iterates nothing. A
// non-string title would become a non-string key, which no test name in a
// dataset can equal, so it is left out.
func mochaTitles(doc map[string]any, key string, status Status, m StatusMap) error {
	v, ok := doc[key]
	if !ok {
		return errNoTitle
	}
	switch tests := v.(type) {
	case []any:
		for _, t := range tests {
			obj, ok := t.(map[string]any)
			if !ok {
				return errNotObject
			}
			title, ok := obj["fullTitle"]
			if !ok {
				return errNoTitle
			}
			if s, ok := title.(string); ok {
				m[s] = status
			}
		}
		return nil
	case string:
		if tests == "" {
			return nil
		}
	case map[string]any:
		if len(tests) == 0 {
			return nil
		}
	}
	return errNotObject
}

var eslintFailure = regexp.MustCompile(`(` + reSpace + `{2}` + reDigit + `+\))((?s:.)*?)` + reSpace + `+(?:(.*)Error)`)

// parseEslint is parse_log_eslint: Mocha's failure list, "  1) title"
// up to the next "...Error", whitespace collapsed; eslint is graded
// fail-only under v5.
func parseEslint(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, g := range eslintFailure.FindAllStringSubmatch(log, -1) {
		m[collapseSpace(g[2])] = FAILED
	}
	return m, nil
}

// bpmnjsFailures are parse_log_bpmn_js's patterns, in order: Karma's
// "Browser version (OS) title FAILED" lines, PhantomJS ones after the
// "\x1b[2K" that erases the progress line. The third has two groups and
// names the test by the second.
var bpmnjsFailures = []*regexp.Regexp{
	regexp.MustCompile(`2KPhantomJS` + reSpace + `[\p{Nd}.]+` + reSpace + `\(Linux` + reSpace + `[\p{Nd}.]+\)` + reSpace + `(.*)FAILED\n`),
	regexp.MustCompile(`2KPhantomJS` + reSpace + `[\p{Nd}.]+` + reSpace + `\(Linux` + reSpace + `x86_64\)` + reSpace + `(.*)FAILED\n`),
	regexp.MustCompile(`Chrome` + reSpace + `Headless` + reSpace + `(.*)` + reSpace + `\(Linux` + reSpace + `x86_64\)` + reSpace + `(.*)FAILED\n`),
	regexp.MustCompile(`HeadlessChrome` + reSpace + `[\p{Nd}.]+` + reSpace + `\(Linux` + reSpace + `[\p{Nd}.]+\)` + reSpace + `(.*)FAILED\n`),
}

// parseBpmnJS is parse_log_bpmn_js; bpmn-js is graded fail-only under v5.
func parseBpmnJS(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, re := range bpmnjsFailures {
		for _, g := range re.FindAllStringSubmatch(log, -1) {
			m[g[len(g)-1]] = FAILED
		}
	}
	return m, nil
}

// openlayersFailures are parse_log_openlayers's patterns (re.MULTILINE):
// Karma's FAILED lines, Mocha's "  1) title ... Error:" failures and the
// rendering tests' "case name: mismatch" lines.
var openlayersFailures = []*regexp.Regexp{
	regexp.MustCompile(`(?m)Chrome` + reSpace + `Headless` + reSpace + `[\p{Nd}.]+` + reSpace + `\(Linux` + reSpace + reNonSpace + `+\)` + reSpace + `(.*)` + reSpace + `FAILED\n`),
	regexp.MustCompile(`(?m)Chrome` + reSpace + `[\p{Nd}.]+` + reSpace + `\(Linux` + reSpace + reNonSpace + `+\)` + reSpace + `(.*)FAILED\n`),
	regexp.MustCompile(`(?m)^` + reSpace + `{2}` + reDigit + `+\)((?s:.)*?)Error:`),
	regexp.MustCompile(`(?m)^case` + reSpace + `(.*):` + reSpace + `mismatch`),
}

// parseOpenlayers is parse_log_openlayers, whitespace in names collapsed;
// openlayers is graded fail-only under v5.
func parseOpenlayers(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, re := range openlayersFailures {
		for _, g := range re.FindAllStringSubmatch(log, -1) {
			m[collapseSpace(g[1])] = FAILED
		}
	}
	return m, nil
}

var (
	jestFileFail = regexp.MustCompile(`(?m)^FAIL` + reSpace + `(.*)`)
	jestFilePass = regexp.MustCompile(`(?m)^PASS` + reSpace + `(.*)`)
)

// parseEmotion is parse_log_emotion: Jest's per-file "PASS path" and
// "FAIL path" lines (a file that both fails and passes in two runs ends
// PASSED, as passes are recorded last).
func parseEmotion(log string, _ harness.Rules) (StatusMap, error) {
	return jestFiles(log, strip), nil
}

func jestFiles(log string, name func(string) string) StatusMap {
	m := StatusMap{}
	for _, g := range jestFileFail.FindAllStringSubmatch(log, -1) {
		m[name(g[1])] = FAILED
	}
	for _, g := range jestFilePass.FindAllStringSubmatch(log, -1) {
		m[name(g[1])] = PASSED
	}
	return m
}

var grommetTiming = regexp.MustCompile(reSpace + `\([\p{Nd}.]+` + reSpace + `?(?:ms|s)\)$`)

// parseGrommet is parse_log_grommet: [parseEmotion] with a trailing
// " (1.2 s)" timing removed.
func parseGrommet(log string, _ harness.Rules) (StatusMap, error) {
	return jestFiles(log, func(s string) string { return remove(grommetTiming, strip(s)) }), nil
}

var (
	nextAssertion = regexp.MustCompile(`AssertionError:` + reSpace + `+#((?s:.)*?)\n\n`)
	nextFail      = regexp.MustCompile(`^.*?✗` + reSpace + `*(.*)`)
	nextPass      = regexp.MustCompile(`^.*?✓` + reSpace + `*(.*)`)
)

// suiteLevel is one open describe block of the indentation-tracking
// parsers: its name and indentation.
type suiteLevel struct {
	name   string
	indent int
}

// suiteStack is the describe-block bookkeeping shared by parse_log_next_v1
// and parse_log_lighthouse_mocha.
type suiteStack []suiteLevel

// enter is the official "Adjust suite name" step for an indented line:
// close the blocks indented as far or further, open this one.
func (s suiteStack) enter(line string) suiteStack {
	indent := indentOf(line)
	for len(s) > 0 && s[len(s)-1].indent >= indent {
		s = s[:len(s)-1]
	}
	return append(s, suiteLevel{strip(line), indent})
}

// name is " - ".join(suite names + [test]).
func (s suiteStack) name(test string) string {
	parts := make([]string, 0, len(s)+1)
	for _, l := range s {
		parts = append(parts, l.name)
	}
	return strings.Join(append(parts, test), " - ")
}

// parseNextV1 is parse_log_next_v1, for Karma's mocha reporter under
// xvfb-run: ANSI codes and "AssertionError: #..." blocks removed, each run
// after " xvfb-run " read from its last "Starting browser Chrome" up to a
// "TOTAL" line; ✗ fails and ✓ passes, named "suite - ... - test" by
// indentation. Lines starting (after whitespace) with ERROR, LOG, WARN,
// Check or "in" are skipped. Open suites carry over from one run to the
// next, as in the official code.
func parseNextV1(log string, _ harness.Rules) (StatusMap, error) {
	log = remove(ansiEscape, log)
	log = remove(nextAssertion, log)
	m := StatusMap{}
	var suite suiteStack
	for _, run := range strings.Split(log, " xvfb-run ")[1:] {
		run = after(run, "Starting browser Chrome")
		for _, line := range lines(run) {
			if strings.HasPrefix(line, "TOTAL") {
				break
			}
			if hasAnyPrefix(strip(line), "ERROR", "LOG", "WARN", "Check", "in") {
				continue
			}
			if g := nextFail.FindStringSubmatch(line); g != nil {
				m[suite.name(g[1])] = FAILED
			} else if g := nextPass.FindStringSubmatch(line); g != nil {
				m[suite.name(g[1])] = PASSED
			} else if indentOf(line) > 0 {
				suite = suite.enter(line)
			}
		}
	}
	return m, nil
}

var (
	nextV2Suite   = regexp.MustCompile(`Running:(.*)\)\n{3}` + reSpace + `{2}(.*)\n`)
	nextV2Failure = regexp.MustCompile(`(?m)^` + reSpace + `{4}` + reDigit + `+\)` + reSpace + `(.*)`)
	nextV2Success = regexp.MustCompile(`(?m)^` + reSpace + `{4}✓` + reSpace + `(.*)\(`)
)

// parseNextV2 is parse_log_next_v2, for Cypress's spec reporter: each
// "Running: file (n of m)" header, two blank lines and the suite title
// open a section whose "    N) title" lines fail and "    ✓ title (12ms)"
// lines pass, named "suite: title".
func parseNextV2(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	headers := nextV2Suite.FindAllStringSubmatchIndex(log, -1)
	for i, h := range headers {
		suite := log[h[4]:h[5]]
		end := len(log)
		if i+1 < len(headers) {
			end = headers[i+1][0]
		}
		section := log[h[1]:end]
		for _, g := range nextV2Failure.FindAllStringSubmatch(section, -1) {
			m[suite+": "+strip(g[1])] = FAILED
		}
		for _, g := range nextV2Success.FindAllStringSubmatch(section, -1) {
			m[suite+": "+strip(g[1])] = PASSED
		}
	}
	return m, nil
}

var mochaJSONTitle = regexp.MustCompile(`(?m)"fullTitle":` + reSpace + `"(.*)",\n`)

// parseCypress is parse_log_cypress: the output is cut at every "../..";
// in each piece but the last, the "fullTitle" lines between `  "passes": [`
// and the last "  }" are PASSED, those between `  "failures": [` and the
// last "  ]," FAILED.
func parseCypress(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	pieces := strings.Split(log, "../..")
	for _, piece := range pieces[:len(pieces)-1] {
		titles(beforeLast(after(piece, `  "passes": [`), "  }"), PASSED, m)
		titles(beforeLast(after(piece, `  "failures": [`), "  ],"), FAILED, m)
	}
	return m, nil
}

// titles records every `"fullTitle": "..."` line of text.
func titles(text string, status Status, m StatusMap) {
	for _, g := range mochaJSONTitle.FindAllStringSubmatch(text, -1) {
		m[g[1]] = status
	}
}

// parseCarbon is parse_log_carbon, which is the same function as
// parse_log_react_pdf (and 5.0.2's lighthouse_jest, scratch_gui and
// prettier): "PASS path (1.2 s)" and "FAIL path" lines.
var parseCarbon = parseReactPDF

var (
	lighthouseRun      = regexp.MustCompile(`running` + reSpace + reDigit + `+` + reSpace + `test` + reSpace + `files`)
	lighthousePassing  = regexp.MustCompile(reDigit + `+` + reSpace + `passing`)
	lighthousePatterns = []struct {
		re     *regexp.Regexp
		status Status
	}{
		{regexp.MustCompile(`^✔` + reSpace + `(.*)` + reSpace + `\(` + reDigit + `+m+s\)`), PASSED},
		{regexp.MustCompile(`^✔` + reSpace + `(.*)`), PASSED},
		{regexp.MustCompile(`^` + reDigit + `+\)` + reSpace + `(.*)` + reSpace + `\(` + reDigit + `+m+s\)`), FAILED},
		{regexp.MustCompile(`^` + reDigit + `+\)` + reSpace + `(.*)`), FAILED},
	}
)

// parseLighthouseMocha is parse_log_lighthouse_mocha, for Mocha's spec
// reporter: each run after "running N test files" is cut at "N passing";
// "✔ title (12ms)" passes, "1) title" fails, named "suite - ... - title"
// by indentation.
func parseLighthouseMocha(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, run := range lighthouseRun.Split(log, -1)[1:] {
		if loc := lighthousePassing.FindStringIndex(run); loc != nil {
			run = run[:loc[0]]
		}
		var suite suiteStack
		for _, line := range lines(strip(run)) {
			matched := false
			for _, p := range lighthousePatterns {
				if g := p.re.FindStringSubmatch(strip(line)); g != nil {
					m[suite.name(g[1])] = p.status
					matched = true
					break
				}
			}
			if !matched && indentOf(line) > 0 {
				suite = suite.enter(line)
			}
		}
	}
	return m, nil
}

// lighthouseJSONCommand separates the runs of Lighthouse's oldest versions.
const lighthouseJSONCommand = "./node_modules/.bin/mocha --reporter json"

// parseLighthouseJSON is the last branch of parse_log_lighthouse, for
// versions before 3: Mocha's JSON reporter after each traced command; the
// "fullTitle" lines between `"passes": [` and the last "]" are PASSED,
// those between `"failures": [` and the last "]," FAILED.
func parseLighthouseJSON(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, run := range strings.Split(log, lighthouseJSONCommand)[1:] {
		titles(beforeLast(after(run, `"passes": [`), "]"), PASSED, m)
		titles(beforeLast(after(run, `"failures": [`), "],"), FAILED, m)
	}
	return m, nil
}

var (
	quartoTest     = regexp.MustCompile(`\[(smoke|unit)\]`)
	quartoFinished = []string{"ERRORS", "failures:"}
	quartoTmp      = []*regexp.Regexp{
		regexp.MustCompile(`/tmp/(` + reWord + `+)\.qmd`),
		regexp.MustCompile(`/tmp/(` + reWord + `+)/`),
	}
	quartoExclude = regexp.MustCompile(`^test result:`)
)

// parseQuartoCli is parse_log_quarto_cli, for Deno's test runner: up to
// the first line holding "ERRORS" or "failures:", every "[smoke]" or
// "[unit]" line is a test named by its text before "...", temporary paths
// numbered in order of appearance (every path a pattern matches gets the
// number of the first one on the line, as re.sub does upstream). A green
// "ok" passes, a red "FAILED" fails, and a line with neither fails too,
// unless the test already has a status; summary lines ("test result:",
// "N passed ... N failed ... steps", blue INFO) are skipped.
func parseQuartoCli(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	tmp := map[string]int{}
	for _, line := range lines(log) {
		if strings.Contains(line, quartoFinished[0]) || strings.Contains(line, quartoFinished[1]) {
			break
		}
		if !quartoTest.MatchString(line) {
			continue
		}
		for _, re := range quartoTmp {
			found := re.FindString(line)
			if found == "" {
				continue
			}
			n, ok := tmp[found]
			if !ok {
				n = len(tmp)
				tmp[found] = n
			}
			line = re.ReplaceAllLiteralString(line, "/tmp/"+strconv.Itoa(n))
		}
		name := strip(before(line, "..."))
		reject := quartoExclude.MatchString(line) ||
			(strings.Contains(line, "passed") && strings.Contains(line, "failed") && strings.Contains(line, "steps")) ||
			strings.Contains(line, "34mINFO")
		if reject {
			continue
		}
		switch {
		case strings.Contains(line, "32mok"):
			m[name] = PASSED
		case strings.Contains(line, "31mFAILED"):
			m[name] = FAILED
		default:
			if _, seen := m[name]; !seen {
				m[name] = FAILED
			}
		}
	}
	return m, nil
}

var (
	plotlySuite = regexp.MustCompile(`^(` + reSpace + `+)-` + reSpace + `+(.*?)` + reSpace + `+:`)
	plotlyTest  = regexp.MustCompile(`^(` + reSpace + `+)\*` + reSpace + `+(.*?)` + reSpace + `+:` + reSpace + `*(.*)`)
)

// parsePlotlyJS is parse_plotly_js, for karma-verbose-reporter's "Suites
// and tests results" (" - suite :", "   * test : ok"): a test is its
// suites and its name joined by ".", PASSED when its status holds "ok"
// and not "failed" (any letter case), else FAILED. Indentation is counted
// in characters, as Python's len does. Upstream pops every open suite
// when a line is indented no deeper than the last suite opened (the depth
// it compares with is not popped along), and so does this.
func parsePlotlyJS(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	var suites []string
	depth := 0
	pop := func(indent int) {
		for len(suites) > 0 && indent <= depth {
			suites = suites[:len(suites)-1]
		}
	}
	for _, line := range lines(log) {
		if g := plotlySuite.FindStringSubmatch(line); g != nil {
			indent := utf8.RuneCountInString(g[1])
			pop(indent)
			suites = append(suites, g[2])
			depth = indent
			continue
		}
		if g := plotlyTest.FindStringSubmatch(line); g != nil {
			pop(utf8.RuneCountInString(g[1]))
			name := strings.Join(append(append([]string{}, suites...), g[2]), ".")
			status := pyLower(g[3])
			if !strings.Contains(status, "ok") || strings.Contains(status, "failed") {
				m[name] = FAILED
			} else {
				m[name] = PASSED
			}
		}
	}
	return m, nil
}

// pyLower is Python's str.lower: Go's strings.ToLower maps U+0130 (İ) to
// "i", Python to "i" and a combining dot above.
func pyLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}
