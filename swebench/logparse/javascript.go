package logparse

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/swebox/swebox/swebench/harness"
)

// Parsers of JavaScript test runners: javascript.py of the official
// log_parsers package.

// reSpaceNoNewline is Python's [^\S\r\n]: whitespace other than \r and \n.
const reSpaceNoNewline = `[\t\x0b\x0c\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// ansiEscape is swebench.harness.utils.ansi_escape.
var ansiEscape = regexp.MustCompile(`\x1b(?:[\x40-\x5a\x5c-\x5f]|\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])`)

// indentOf is len(line) - len(line.lstrip()), counted in characters.
func indentOf(line string) int {
	return utf8.RuneCountInString(line) - utf8.RuneCountInString(lstrip(line))
}

var jestResult = regexp.MustCompile(`^` + reSpace + `*(✓|✕|○)` + reSpace + `(.+?)(?:` + reSpace + `\((` + reDigit + `+` + reSpace + `*m?s)\))?$`)

// parseJest is parse_log_jest, for jest --verbose: ✓ passed, ✕ failed,
// ○ skipped, the duration dropped. 5.0.2 strips the name; 4.1.0 keeps the
// whitespace between a name and its duration ("✓ name  (3 ms)" is
// "name ").
func parseJest(log string, rules harness.Rules) (StatusMap, error) {
	return matchLines(log, jestResult, func(g []string) (string, Status) {
		name := g[2]
		if rules != harness.V4 {
			name = strip(name)
		}
		return name, map[string]Status{"✓": PASSED, "✕": FAILED, "○": SKIPPED}[g[1]]
	}), nil
}

var jestJSONResult = regexp.MustCompile(`^\[(PASSED|FAILED)\]` + reSpace + `(.+)$`)

// parseJestJSON is parse_log_jest_json, for jest --json piped through the
// official jq transform ("[PASSED] name").
func parseJestJSON(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, jestJSONResult, func(g []string) (string, Status) {
		return g[2], Status(g[1])
	}), nil
}

var vitestResult = regexp.MustCompile(`^` + reSpace + `*(✓|×|↓)` + reSpace + `(.+?)(?:` + reSpace + `(` + reDigit + `+` + reSpace + `*m?s?|\[skipped\]))?$`)

// parseVitest is parse_log_vitest, for --reporter=verbose: ✓ passed,
// × failed, ↓ skipped.
func parseVitest(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, vitestResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"✓": PASSED, "×": FAILED, "↓": SKIPPED}[g[1]]
	}), nil
}

var karmaLine = regexp.MustCompile(`^(` + reSpace + `*)?([✔✖])?` + reSpace + `(.*)$`)

// parseKarma is parse_log_karma: after "Starting browser", indented lines
// without a mark open describe blocks and ✔/✖ lines are tests named
// "suite > ... > test"; "SUMMARY:" ends the list. A dedent with no open
// block raises IndexError in the official code.
func parseKarma(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	indent := -1
	var suite []string
	started := false
	for i, line := range lines(log) {
		if strings.HasPrefix(line, "SUMMARY:") {
			return m, nil
		}
		if strings.Contains(line, "Starting browser") {
			started = true
			continue
		}
		if !started {
			continue
		}
		g := karmaLine.FindStringSubmatch(line)
		if g == nil {
			continue
		}
		lead, mark, name := g[1], g[2], g[3]
		if lead != "" && mark == "" {
			n := utf8.RuneCountInString(lead)
			if n > indent {
				indent = n
				suite = append(suite, name)
			} else if n < indent {
				indent = n
				if len(suite) == 0 {
					return nil, raised(harness.ParserKarma, i, line)
				}
				suite = suite[:len(suite)-1]
				continue
			}
		}
		switch mark {
		case "✔":
			m[strings.Join(append(suite[:len(suite):len(suite)], name), " > ")] = PASSED
		case "✖":
			m[strings.Join(append(suite[:len(suite):len(suite)], name), " > ")] = FAILED
		}
	}
	return m, nil
}

var tapResult = regexp.MustCompile(`^(ok|not ok) (` + reDigit + `+) (.+)$`)

// parseTap is parse_log_tap: "ok 1 name" and "not ok 2 name".
func parseTap(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, tapResult, func(g []string) (string, Status) {
		return g[3], map[string]Status{"ok": PASSED, "not ok": FAILED}[g[1]]
	}), nil
}

var markedFailure = regexp.MustCompile(`^` + reDigit + `+\)` + reSpace + `(.*)`)

// parseMarked is parse_log_marked: only failures ("1) name") are listed;
// marked is graded fail-only.
func parseMarked(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		if g := markedFailure.FindStringSubmatch(line); g != nil {
			m[strip(g[1])] = FAILED
		}
	}
	return m, nil
}

var chartJSFailure = regexp.MustCompile(`(?m)Chrome` + reSpace + `[\p{Nd}.]+` + reSpaceNoNewline + `\(.+?\)` + reSpaceNoNewline + `(.*)FAILED$`)

// parseChartJS is parse_log_chart_js: Karma's "Chrome 1.2 (Linux) name
// FAILED" lines; Chart.js is graded fail-only.
func parseChartJS(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, g := range chartJSFailure.FindAllStringSubmatch(ansiEscape.ReplaceAllString(log, ""), -1) {
		m[g[1]] = FAILED
	}
	return m, nil
}

var reactPDFPatterns = func() []struct {
	re     *regexp.Regexp
	status Status
} {
	var out []struct {
		re     *regexp.Regexp
		status Status
	}
	for _, word := range []string{"PASS", "FAIL"} {
		status := map[string]Status{"PASS": PASSED, "FAIL": FAILED}[word]
		for _, tail := range []string{
			reSpace + `\([\p{Nd}.]+ms\)`,
			reSpace + `\([\p{Nd}.]+` + reSpace + `s\)`,
			reSpace + `\([\p{Nd}.]+s\)`,
			``,
		} {
			out = append(out, struct {
				re     *regexp.Regexp
				status Status
			}{regexp.MustCompile(`^` + word + reSpace + `(.*)` + tail), status})
		}
	}
	return out
}()

// parseReactPDF is parse_log_react_pdf: "PASS name (12ms)" and "FAIL name";
// the first of the official patterns that matches names the test.
func parseReactPDF(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		for _, p := range reactPDFPatterns {
			if g := p.re.FindStringSubmatch(line); g != nil {
				m[g[1]] = p.status
				break
			}
		}
	}
	return m, nil
}

var (
	calypsoDuration = regexp.MustCompile(`\(` + reDigit + `+ms\)`)
	calypsoPatterns = map[string][2]*regexp.Regexp{
		"✓": {
			regexp.MustCompile(`^` + reSpace + `+✓` + reSpace + `(.*)\(` + reDigit + `+ms\)$`),
			regexp.MustCompile(`^` + reSpace + `+✓` + reSpace + `(.*)`),
		},
		"✕": {
			regexp.MustCompile(`^` + reSpace + `+✕` + reSpace + `(.*)\(` + reDigit + `+ms\)$`),
			regexp.MustCompile(`^` + reSpace + `+✕` + reSpace + `(.*)`),
		},
	}
)

type calypsoSuite struct {
	name   string
	indent int
}

// parseCalypso is parse_log_calypso: for every jest run the describe blocks
// are tracked by indentation and a test is "suite - ... - test". A mark
// line the official pattern does not match raises in the official code
// (re.match(...).group on None).
func parseCalypso(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	var suite []calypsoSuite
	runs := strings.Split(log, " ./node_modules/.bin/jest ")
	for _, run := range runs[1:] {
		for i, line := range lines(run) {
			if hasAnyPrefix(line, "Test Suites", "  ● ") {
				break
			}
			mark := ""
			switch stripped := strip(line); {
			case strings.HasPrefix(stripped, "✓"):
				mark = "✓"
			case strings.HasPrefix(stripped, "✕"):
				mark = "✕"
			}
			if mark != "" {
				pattern := calypsoPatterns[mark][1]
				if calypsoDuration.MatchString(line) {
					pattern = calypsoPatterns[mark][0]
				}
				g := pattern.FindStringSubmatch(line)
				if g == nil {
					return nil, raised(harness.ParserCalypso, i, line)
				}
				names := make([]string, len(suite))
				for j, s := range suite {
					names[j] = s.name
				}
				name := strip(strings.Join(names, " - ") + " - " + g[1])
				m[name] = map[string]Status{"✓": PASSED, "✕": FAILED}[mark]
				continue
			}
			indent := indentOf(line)
			if indent == 0 {
				continue
			}
			for len(suite) > 0 && suite[len(suite)-1].indent >= indent {
				suite = suite[:len(suite)-1]
			}
			suite = append(suite, calypsoSuite{strip(line), indent})
		}
	}
	return m, nil
}

// parseP5js is parse_log_p5js: mocha failure headers ("1) suite\n  test:")
// after JSON and XML blocks are cut out; p5.js is graded fail-only.
func parseP5js(log string, _ harness.Rules) (StatusMap, error) {
	log = ansiEscape.ReplaceAllString(log, "")
	log = removeJSONBlocks(log)
	log = removeXMLBlocks(log)
	m := StatusMap{}
	for _, g := range p5jsFailure.FindAllStringSubmatch(log, -1) {
		parts := lines(g[2])
		if !increasingIndent(parts) {
			continue
		}
		for i := range parts {
			parts[i] = strip(parts[i])
		}
		m[strings.Join(parts, ":")] = FAILED
	}
	return m, nil
}

var p5jsFailure = regexp.MustCompile(`(?ms)^` + reSpace + `*(` + reDigit + `+)\)(.{0,1000}?):`)

// increasingIndent is is_valid_fail: every line more indented than the last,
// the first more than zero.
func increasingIndent(parts []string) bool {
	last := 0
	for _, line := range parts {
		n := indentOf(line)
		if n <= last {
			return false
		}
		last = n
	}
	return true
}

// removeJSONBlocks is remove_json_blocks of parse_log_p5js.
func removeJSONBlocks(log string) string {
	var kept []string
	inObject, inList := false, false
	for _, line := range lines(log) {
		s := strings.TrimRightFunc(line, isSpace)
		switch {
		case strings.HasSuffix(s, "{"):
			inObject = true
		case strings.HasSuffix(s, "["):
			inList = true
		case s == "}" && inObject:
			inObject = false
		case s == "]" && inList:
			inList = false
		case inObject || inList:
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
		case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		default:
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// removeXMLBlocks is remove_xml_blocks of parse_log_p5js: repeatedly the
// leftmost "<name>...</name>" (shortest body) is replaced by as many
// "<name>" as the block held beyond its first. Go's regexp has no
// backreference, so the search of r"<(\w+)>[\s\S]*?<\/\1>" is written out.
func removeXMLBlocks(log string) string {
	for {
		start, end, name, ok := findXMLBlock(log)
		if !ok {
			return log
		}
		open := "<" + name + ">"
		n := strings.Count(log[start:end], open) - 1
		if n < 0 {
			n = 0
		}
		log = log[:start] + strings.Repeat(open, n) + log[end:]
	}
}

func findXMLBlock(s string) (start, end int, name string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) || (r == utf8.RuneError && size == 1) {
				break
			}
			j += size
		}
		if j == i+1 || j >= len(s) || s[j] != '>' {
			continue
		}
		name = s[i+1 : j]
		closing := "</" + name + ">"
		if k := strings.Index(s[j+1:], closing); k >= 0 {
			return i, j + 1 + k + len(closing), name, true
		}
	}
	return 0, 0, "", false
}

// isWordRune is Python's \w for one character, as reWord.
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }
