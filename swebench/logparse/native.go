package logparse

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/swebox/swebox/swebench/harness"
)

// Parsers of C/C++, PHP and Ruby: c.py, php.py and ruby.py of the official
// log_parsers package. Every one matches a stripped line with re.match,
// except phpunit, which reads raw lines.

var (
	redisResult  = regexp.MustCompile(`^\[(ok|err|skip|ignore)\]:` + reSpace + `(.+?)(?:` + reSpace + `\((` + reDigit + `+` + reSpace + `*m?s)\))?$`)
	redisErrFile = regexp.MustCompile(reSpace + `+in` + reSpace + `+` + reNonSpace + `+$`)
)

// parseRedis is parse_log_redis (redis, valkey): "[ok]: name (12 ms)"
// lines. A failed test's name loses a trailing " in tests/file.tcl".
func parseRedis(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, redisResult, func(g []string) (string, Status) {
		switch g[1] {
		case "ok":
			return g[2], PASSED
		case "err":
			return redisErrFile.ReplaceAllString(g[2], ""), FAILED
		}
		return g[2], SKIPPED
	}), nil
}

var jqResult = regexp.MustCompile(`^` + reSpace + `*(PASS|FAIL):` + reSpace + `(.+)$`)

// parseJq is parse_log_jq: "PASS: tests/jqtest" lines.
func parseJq(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, jqResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"PASS": PASSED, "FAIL": FAILED}[g[1]]
	}), nil
}

var micropythonResult = regexp.MustCompile(`^(pass|FAIL|skip)` + reSpace + `+(.+)$`)

// parseMicropython is parse_log_micropython_test: "pass basics/int.py".
func parseMicropython(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, micropythonResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"pass": PASSED, "FAIL": FAILED, "skip": SKIPPED}[g[1]]
	}), nil
}

var googletestResult = regexp.MustCompile(`^.*\[` + reSpace + `*(OK|FAILED)` + reSpace + `*\]` + reSpace + `(.*)` + reSpace + `\(.*\)$`)

// parseGoogletest is parse_log_googletest: "[       OK ] Suite.Test (0 ms)";
// the summary's "[  FAILED  ] Suite.Test (…)" lines match too.
func parseGoogletest(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, googletestResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"OK": PASSED, "FAILED": FAILED}[g[1]]
	}), nil
}

// parseDoctest is parse_log_doctest (nlohmann/json), for a test binary run
// with -r=xml: the text from the first "<doctest" to the next "</doctest>"
// is parsed as XML, and each SubCase under a TestCase is a test named
// "TestCase > SubCase" that passed when all its Expressions succeeded. The
// official parser raises when that text is not well-formed XML, and also,
// by a quirk of its end index, when "<doctest" has no "</doctest>" after it.
func parseDoctest(log string, _ harness.Rules) (StatusMap, error) {
	start := strings.Index(log, "<doctest")
	if start < 0 {
		return StatusMap{}, nil
	}
	end := strings.Index(log[start:], "</doctest>")
	if end < 0 {
		return nil, fmt.Errorf("parse_log_doctest: %q without a closing </doctest>: %w", "<doctest", ErrParserRaised)
	}
	root, err := parseXMLTree(log[start : start+end+len("</doctest>")])
	if err != nil {
		return nil, fmt.Errorf("parse_log_doctest: %v: %w", err, ErrParserRaised)
	}
	m := StatusMap{}
	for _, tc := range root.descendants("TestCase") {
		for _, sc := range tc.descendants("SubCase") {
			status := PASSED
			for _, expr := range sc.descendants("Expression") {
				if expr.attr("success") != "true" {
					status = FAILED
				}
			}
			m[tc.attr("name")+" > "+sc.attr("name")] = status
		}
	}
	return m, nil
}

// xmlNode is an element of a parsed document, as much of ElementTree's
// model as parse_log_doctest uses.
type xmlNode struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*xmlNode
}

// attr is Element.get(name) formatted by an f-string: "None" when absent.
func (n *xmlNode) attr(name string) string {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value
		}
	}
	return "None"
}

// descendants is Element.findall(".//tag"): every element below n with
// that tag and no namespace, in document order.
func (n *xmlNode) descendants(tag string) []*xmlNode {
	var out []*xmlNode
	var walk func(*xmlNode)
	walk = func(e *xmlNode) {
		for _, c := range e.children {
			if c.name.Space == "" && c.name.Local == tag {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(n)
	return out
}

// parseXMLTree parses a document that must be exactly one element, as
// ElementTree.fromstring does on the text it is given.
func parseXMLTree(doc string) (*xmlNode, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	var root *xmlNode
	var stack []*xmlNode
	for {
		tok, err := d.Token()
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
			n := &xmlNode{name: t.Name, attrs: t.Attr}
			if len(stack) == 0 {
				root = n
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 && strings.TrimLeft(string(t), " \t\r\n") != "" {
				return nil, errors.New("junk after document element")
			}
		}
	}
	if root == nil || len(stack) > 0 {
		return nil, errors.New("no element found")
	}
	return root, nil
}

var (
	phpunitSuite = regexp.MustCompile(`^(` + reWord + `.+) \(.+\)$`)
	phpunitTest  = regexp.MustCompile(`^` + reSpace + `*([✔✘↩])` + reSpace + `*(.*)$`)
)

// parsePhpunit is parse_log_phpunit, for phpunit --testdox: a line
// "Suite name (Namespace\Class)" opens a suite and "✔ name" lines under it
// are tests named "Suite name > name" ("None > name" before any suite).
// Lines are not stripped.
func parsePhpunit(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	suite := "None"
	for _, line := range lines(log) {
		if g := phpunitSuite.FindStringSubmatch(line); g != nil {
			suite = g[1]
			continue
		}
		if g := phpunitTest.FindStringSubmatch(line); g != nil {
			m[suite+" > "+g[2]] = map[string]Status{"✔": PASSED, "✘": FAILED, "↩": SKIPPED}[g[1]]
		}
	}
	return m, nil
}

var minitestResult = regexp.MustCompile(`^(.+)\. .*=.*(\.|F|E).*$`)

// parseMinitest is parse_log_minitest: "TestX#test_y = 0.00 s = ." lines
// (the outcome is the last ".", "F" or "E" after an "=").
func parseMinitest(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, minitestResult, func(g []string) (string, Status) {
		return g[1], map[string]Status{".": PASSED, "F": FAILED, "E": FAILED}[g[2]]
	}), nil
}

var cucumberResult = regexp.MustCompile(`^(.*) \.+(\.|F)`)

// parseCucumber is parse_log_cucumber, for --format progress.
func parseCucumber(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, cucumberResult, func(g []string) (string, Status) {
		return g[1], map[string]Status{".": PASSED, "F": FAILED}[g[2]]
	}), nil
}

// parseRubyUnit is parse_log_ruby_unit (test-unit): "test: name: ." and
// "name: F" lines; "O" (omitted) is SKIPPED.
func parseRubyUnit(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		if name, status, ok := matchRubyUnit(strip(line)); ok {
			m[name] = status
		}
	}
	return m, nil
}

// matchRubyUnit is re.match(r"^\s*(?:test: )?(.+):\s+(\.|E\b|F\b|O\b)")
// on a stripped line. Go's regexp has no Unicode \b, so the match is
// searched in the order Python's backtracking tries: with the optional
// prefix, then without; the longest name first.
func matchRubyUnit(line string) (string, Status, bool) {
	for _, prefix := range []string{"test: ", ""} {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rest := line[len(prefix):]
		for end := strings.LastIndexByte(rest, ':'); end > 0; end = strings.LastIndexByte(rest[:end], ':') {
			after := rest[end+1:]
			spaces := strings.TrimLeftFunc(after, isSpace)
			if len(spaces) == len(after) || spaces == "" {
				continue
			}
			outcome, next := spaces[0], spaces[1:]
			if outcome == '.' {
				return rest[:end], PASSED, true
			}
			if r, _ := utf8.DecodeRuneInString(next); (outcome == 'E' || outcome == 'F' || outcome == 'O') && (next == "" || !isWordRune(r)) {
				return rest[:end], map[byte]Status{'E': FAILED, 'F': FAILED, 'O': SKIPPED}[outcome], true
			}
		}
	}
	return "", "", false
}

var rspecResult = regexp.MustCompile(`^(.+) - (passed|failed)`)

// parseRspecTransformedJSON is parse_log_rspec_transformed_json: rspec's
// JSON report turned into "description - passed" lines.
func parseRspecTransformedJSON(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, rspecResult, func(g []string) (string, Status) {
		return g[1], map[string]Status{"passed": PASSED, "failed": FAILED}[g[2]]
	}), nil
}
