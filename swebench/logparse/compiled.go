package logparse

import (
	"regexp"
	"strings"

	"github.com/swebox/swebox/swebench/harness"
)

// Parsers of compiled languages: go.py, rust.py and java.py of the official
// log_parsers package.

var gotestResult = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$`)

// parseGotest is parse_log_gotest: "--- PASS: TestX (0.00s)" lines,
// subtests included (they are indented; lines are stripped).
func parseGotest(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, gotestResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"PASS": PASSED, "FAIL": FAILED, "SKIP": SKIPPED}[g[1]]
	}), nil
}

// matchLines is the loop most official parsers share: re matched against
// every stripped line, each match turned into a name and a status by f; an
// empty status records nothing.
func matchLines(log string, re *regexp.Regexp, f func(g []string) (string, Status)) StatusMap {
	m := StatusMap{}
	for _, line := range lines(log) {
		g := re.FindStringSubmatch(strip(line))
		if g == nil {
			continue
		}
		if name, status := f(g); status != "" {
			m[name] = status
		}
	}
	return m
}

var cargoResult = regexp.MustCompile(`^test` + reSpace + `+(` + reNonSpace + `+)` + reSpace + `+\.\.\.` + reSpace + `+(` + reWord + `+)$`)

// parseCargo is parse_log_cargo: "test path::name ... ok" lines; only ok and
// FAILED are recorded (ignored tests are missing).
func parseCargo(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, cargoResult, func(g []string) (string, Status) {
		return g[1], map[string]Status{"ok": PASSED, "FAILED": FAILED}[g[2]]
	}), nil
}

var (
	mavenTest   = regexp.MustCompile(`^.*-Dtest=(` + reNonSpace + `+).*$`)
	mavenResult = regexp.MustCompile(`^.*BUILD (SUCCESS|FAILURE)$`)
)

// mavenNoName is the name 4.1.0 records a BUILD result under when no
// -Dtest= line came before it.
const mavenNoName = "---NO TEST NAME FOUND YET---"

// parseMaven is parse_log_maven. Maven does not print passing tests, so each
// test runs on its own and the traced command line (set -x) names it.
//
// 4.1.0 gives each "BUILD SUCCESS/FAILURE" to the most recent -Dtest= name
// (mavenNoName before any). 5.0.2 pairs them first in, first out: a result
// goes to the oldest test still waiting, a result with no test waiting is
// kept, and once the log ends the waiting tests take the kept results in
// order.
func parseMaven(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	status := map[string]Status{"SUCCESS": PASSED, "FAILURE": FAILED}
	current := mavenNoName
	var pending, unmatched []string
	for _, line := range lines(log) {
		line = strip(line)
		if g := mavenTest.FindStringSubmatch(line); g != nil {
			current = g[1]
			pending = append(pending, g[1])
		}
		g := mavenResult.FindStringSubmatch(line)
		switch {
		case g == nil:
		case rules == harness.V4:
			m[current] = status[g[1]]
		case len(pending) > 0:
			m[pending[0]] = status[g[1]]
			pending = pending[1:]
		default:
			unmatched = append(unmatched, g[1])
		}
	}
	for ; len(pending) > 0 && len(unmatched) > 0; pending, unmatched = pending[1:], unmatched[1:] {
		m[pending[0]] = status[unmatched[0]]
	}
	return m, nil
}

var antResult = regexp.MustCompile(`^` + reSpace + `*\[junit\]` + reSpace + `+\[(PASS|FAIL|ERR)\]` + reSpace + `+(.*)$`)

// parseAnt is parse_log_ant: "[junit] [PASS] name" lines; FAIL and ERR are
// both FAILED.
func parseAnt(log string, _ harness.Rules) (StatusMap, error) {
	return matchLines(log, antResult, func(g []string) (string, Status) {
		return g[2], map[string]Status{"PASS": PASSED, "FAIL": FAILED, "ERR": FAILED}[g[1]]
	}), nil
}

var (
	gradleFull       = regexp.MustCompile(`^([^>].+)` + reSpace + `+(PASSED|FAILED)$`)
	gradleName       = regexp.MustCompile(`^([^>]` + reNonSpace + `*` + reSpace + `+>` + reSpace + `+` + reNonSpace + `+)$`)
	gradleStatusOnly = regexp.MustCompile(`^(PASSED|FAILED)$`)
)

// parseGradleCustom is parse_log_gradle_custom: "pkg.Class > method
// PASSED". 5.0.2 also pairs a line holding only "pkg.Class > method" with
// a later line holding only the status, when output interleaves; 4.1.0
// reads only the first form.
func parseGradleCustom(log string, rules harness.Rules) (StatusMap, error) {
	m := StatusMap{}
	pending := ""
	for _, line := range lines(log) {
		line = strip(line)
		if g := gradleFull.FindStringSubmatch(line); g != nil {
			m[g[1]] = Status(g[2])
			pending = ""
			continue
		}
		if rules == harness.V4 {
			continue
		}
		if g := gradleName.FindStringSubmatch(line); g != nil {
			pending = g[1]
			continue
		}
		if pending != "" && gradleStatusOnly.MatchString(line) {
			m[pending] = Status(line)
			pending = ""
		}
	}
	return m, nil
}

// hasAnyPrefix is any(line.startswith(p) for p in prefixes).
func hasAnyPrefix(line string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
