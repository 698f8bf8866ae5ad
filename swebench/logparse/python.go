package logparse

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
)

// The Python parsers of swebench/harness/log_parsers/python.py, rule for
// rule. Names are what the dataset labels were produced with, quirks
// included: a pytest name is cut at its first whitespace, FAILED lines lose
// every " - ", "SKIPPED [1] file:line" records a test named "[1]" (v4).

// startsWithStatus is any(line.startswith(x.value) for x in TestStatus).
func startsWithStatus(line string) bool {
	for _, s := range statusOrder {
		if strings.HasPrefix(line, string(s)) {
			return true
		}
	}
	return false
}

// endsWithStatus is any(line.endswith(x.value) for x in TestStatus).
func endsWithStatus(line string) bool {
	for _, s := range statusOrder {
		if strings.HasSuffix(line, string(s)) {
			return true
		}
	}
	return false
}

var skipCount = regexp.MustCompile(`^\[` + reDigit + `+\]$`)

// isSkipSummary is v5's _is_skip_summary on a split line: pytest's
// "SKIPPED [N] path:line: reason" summary, where "[N]" is a count, not a
// test. It is scoped to SKIPPED: "PASSED [100%]" progress artefacts stay,
// because pytest-dev__pytest-5262 and -7521 list "[100%]" in PASS_TO_PASS.
func isSkipSummary(tok []string) bool {
	return tok[0] == string(SKIPPED) && skipCount.MatchString(tok[1])
}

// pytestLine applies parse_log_pytest's rule to one line. It returns the
// name and the raw status token, or ok=false when the line records nothing.
// skipCounts drops "SKIPPED [N] file:line: reason" summaries (v5).
func pytestLine(line string, skipCounts bool) (name string, status Status, ok bool) {
	if !startsWithStatus(line) {
		return "", "", false
	}
	if strings.HasPrefix(line, string(FAILED)) {
		line = strings.ReplaceAll(line, " - ", " ")
	}
	tok := fields(line)
	if len(tok) <= 1 {
		return "", "", false
	}
	if skipCounts && isSkipSummary(tok) {
		return "", "", false
	}
	return tok[1], Status(tok[0]), true
}

// parsePytest is parse_log_pytest: for every line starting with a status
// word, map[tok[1]] = tok[0].
func parsePytest(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		if name, status, ok := pytestLine(line, rules == harness.V5); ok {
			m[name] = status
		}
	}
	return m, nil
}

// parsePytestOptions is parse_log_pytest_options: pytest names whose
// parameter is an absolute path keep only "/" + its last segment.
func parsePytestOptions(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		if name, status, ok := pytestLine(line, rules == harness.V5); ok {
			m[optionName(name)] = status
		}
	}
	return m, nil
}

// optionName applies re.search(r"(.*?)\[(.*)\]", name): main is the text
// before the first "[", the option runs to the last "]", and whatever follows
// that "]" is dropped.
func optionName(name string) string {
	open := strings.IndexByte(name, '[')
	closing := strings.LastIndexByte(name, ']')
	if open < 0 || closing < open {
		return name
	}
	main, option := name[:open], name[open+1:closing]
	if strings.HasPrefix(option, "/") && !strings.HasPrefix(option, "//") && !strings.Contains(option, "*") {
		option = "/" + option[strings.LastIndexByte(option, '/')+1:]
	}
	return main + "[" + option + "]"
}

// parseMatplotlib is parse_log_matplotlib: pytest after replacing
// MouseButton.LEFT by 1 and MouseButton.RIGHT by 3.
func parseMatplotlib(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		line = strings.ReplaceAll(line, "MouseButton.LEFT", "1")
		line = strings.ReplaceAll(line, "MouseButton.RIGHT", "3")
		if name, status, ok := pytestLine(line, rules == harness.V5); ok {
			m[name] = status
		}
	}
	return m, nil
}

var (
	// ansiColour is re.sub(r"\[(\d+)m", "", line) of parse_log_pytest_v2.
	ansiColour = regexp.MustCompile(`\[(` + reDigit + `+)m`)
	// controlChars are chr(1)..chr(31), deleted by str.translate.
	controlChars = func() *strings.Replacer {
		var pairs []string
		for c := byte(1); c < 32; c++ {
			pairs = append(pairs, string([]byte{c}), "")
		}
		return strings.NewReplacer(pairs...)
	}()
)

// parsePytestV2 is parse_log_pytest_v2. Lines are cleaned of "[NNm" and of
// the control characters 0x01..0x1F (tabs included). Lines starting with a
// status are read as by pytest; otherwise a line ending with a status is the
// older "name STATUS" format.
//
// v4 keys tok[1] (start branch) and maps tok[0] to tok[1] (end branch). v5
// cuts FAILED lines at their first " - ", drops skip summaries and keys the
// whole rest of the line joined by single spaces, " ".join(tok[1:]) and
// " ".join(tok[:-1]); an XFAIL or ERROR line therefore keys "id - reason".
func parsePytestV2(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, line := range lines(log) {
		line = ansiColour.ReplaceAllString(line, "")
		line = controlChars.Replace(line)
		switch {
		case startsWithStatus(line):
			if strings.HasPrefix(line, string(FAILED)) {
				if rules == harness.V5 {
					line = before(line, " - ")
				} else {
					line = strings.ReplaceAll(line, " - ", " ")
				}
			}
			tok := fields(line)
			if len(tok) < 2 {
				continue
			}
			if rules == harness.V5 {
				if isSkipSummary(tok) {
					continue
				}
				m[strings.Join(tok[1:], " ")] = Status(tok[0])
			} else {
				m[tok[1]] = Status(tok[0])
			}
		case endsWithStatus(line):
			tok := fields(line)
			if len(tok) < 2 {
				continue
			}
			if rules == harness.V5 {
				m[strings.Join(tok[:len(tok)-1], " ")] = Status(tok[len(tok)-1])
			} else {
				m[tok[0]] = Status(tok[1])
			}
		}
	}
	return m, nil
}

// parseSeaborn is parse_log_seaborn. It records only PASSED and FAILED. On a
// status line with a single token v4 raises IndexError (#611); v5 skips it.
func parseSeaborn(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for i, line := range lines(log) {
		parts := fields(line)
		var name string
		var status Status
		switch {
		case strings.HasPrefix(line, string(FAILED)):
			name, status = at(parts, 1), FAILED
		case strings.Contains(line, " PASSED "):
			if len(parts) > 1 && parts[1] != string(PASSED) {
				continue
			}
			name, status = at(parts, 0), PASSED
			if len(parts) < 2 {
				name = ""
			}
		case strings.HasPrefix(line, string(PASSED)):
			name, status = at(parts, 1), PASSED
		default:
			continue
		}
		if name == "" {
			if rules == harness.V5 {
				continue
			}
			return nil, raised(harness.ParserSeaborn, i, line)
		}
		m[name] = status
	}
	return m, nil
}

// at returns tok[i], or "" when tok is too short (an IndexError in Python;
// a token is never empty).
func at(tok []string, i int) string {
	if i < len(tok) {
		return tok[i]
	}
	return ""
}

func raised(parser string, index int, line string) error {
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return fmt.Errorf("parse_log_%s: line %d %q: %w", parser, index+1, line, ErrParserRaised)
}

// sympyFailure is the findall pattern of parse_log_sympy over the whole log:
// "___ sympy/x/tests/test_y.py:test_z ___" headers of failed tests.
var sympyFailure = regexp.MustCompile(`(_*) (.*)\.py:(.*) (_*)`)

// parseSympy is parse_log_sympy, for bin/test output.
func parseSympy(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	for _, g := range sympyFailure.FindAllStringSubmatch(log, -1) {
		m[g[2]+".py:"+g[3]] = FAILED
	}
	for _, line := range lines(log) {
		line = strip(line)
		if !strings.HasPrefix(line, "test_") {
			continue
		}
		name := fields(line)[0]
		switch {
		case strings.HasSuffix(line, " E"):
			m[name] = ERROR
		case strings.HasSuffix(line, " F"):
			m[name] = FAILED
		case strings.HasSuffix(line, " ok"):
			m[name] = PASSED
		}
	}
	return m, nil
}

// djangoInterrupted are the three multiline patterns of parse_log_django for
// a test line whose "ok" was pushed to the next line by a print.
// Each comes with a literal it cannot match without, to skip the regexp on
// the (usual) logs that lack it.
var djangoInterrupted = []struct {
	literal string
	re      *regexp.Regexp
}{
	{"Testing against Django installed in ", regexp.MustCompile(`(?m)^(.*?)` + reSpace + `\.\.\.` + reSpace + `Testing against Django installed in ((?s:.*?)) silenced\)\.\nok$`)},
	{"Internal Server Error: /", regexp.MustCompile(`(?m)^(.*?)` + reSpace + `\.\.\.` + reSpace + `Internal Server Error: /(.*)/\nok$`)},
	{"System check identified no issues (0 silenced)\nok", regexp.MustCompile(`(?m)^(.*?)` + reSpace + `\.\.\.` + reSpace + `System check identified no issues \(0 silenced\)\nok$`)},
}

var djangoPassSuffixes = []string{" ... ok", " ... OK", " ...  OK"}

// parseDjango is parse_log_django, for runtests.py --verbosity 2 output
// ("test_x (module.Class) ... ok"). A "FAIL:"/"ERROR:" line with a single
// token raises IndexError in the official code.
func parseDjango(log string, _ harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	prevTest, havePrev := "", false
	for i, line := range lines(log) {
		line = strip(line)
		if strings.Contains(line, "--version is equivalent to version") {
			m["--version is equivalent to version"] = PASSED
		}
		if strings.Contains(line, " ... ") {
			prevTest, havePrev = before(line, " ... "), true
		}
		for _, suffix := range djangoPassSuffixes {
			if !strings.HasSuffix(line, suffix) {
				continue
			}
			// The official fix for django__django-7188, where migration
			// output is glued to the front of the test line.
			if strings.HasPrefix(strip(line), "Applying sites.0002_alter_domain_unique...test_no_migrations") {
				_, after, _ := strings.Cut(line, "...")
				line = strip(after)
			}
			test := line
			if j := strings.LastIndex(line, suffix); j >= 0 {
				test = line[:j]
			}
			m[test] = PASSED
			break
		}
		if strings.Contains(line, " ... skipped") {
			m[before(line, " ... skipped")] = SKIPPED
		}
		if strings.HasSuffix(line, " ... FAIL") {
			m[before(line, " ... FAIL")] = FAILED
		}
		if strings.HasSuffix(line, " ... ERROR") {
			m[before(line, " ... ERROR")] = ERROR
		}
		// "FAIL: test_x (mod.Class)" blocks key the bare method name.
		for prefix, status := range map[string]Status{"FAIL:": FAILED, "ERROR:": ERROR} {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			tok := fields(line)
			if len(tok) < 2 {
				return nil, raised(harness.ParserDjango, i, line)
			}
			m[tok[1]] = status
		}
		if strings.HasPrefix(lstrip(line), "ok") && havePrev {
			m[prevTest] = PASSED
		}
	}
	for _, p := range djangoInterrupted {
		if !strings.Contains(log, p.literal) {
			continue
		}
		for _, g := range p.re.FindAllStringSubmatch(log, -1) {
			m[g[1]] = PASSED
		}
	}
	return m, nil
}
