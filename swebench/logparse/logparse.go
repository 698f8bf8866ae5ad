package logparse

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Status is a test outcome as the official parsers record it. The five
// constants are the official TestStatus values. A line-based parser stores
// the raw status token of the line it read, so a map can hold other values
// too (for example "ERROR:" from a usage error line); grading treats those
// as neither passed nor failed, exactly as the official code does.
type Status string

// The official TestStatus values. There is no XPASS: an XPASS line is not
// recorded and the test counts as missing.
const (
	PASSED  Status = "PASSED"
	FAILED  Status = "FAILED"
	SKIPPED Status = "SKIPPED"
	ERROR   Status = "ERROR"
	XFAIL   Status = "XFAIL"
)

// statusOrder is TestStatus in its declaration order, which is the order the
// official parsers test line prefixes in.
var statusOrder = []Status{FAILED, PASSED, SKIPPED, ERROR, XFAIL}

// StatusMap maps a test name to its status. Like the official dict, a later
// line overwrites an earlier one.
type StatusMap map[string]Status

// Rules selects the official harness release whose behaviour is reproduced.
type Rules string

const (
	// V4 is SWE-bench v4.1.0, the widely deployed release.
	V4 Rules = "v4"
	// V5 is SWE-bench v5: pytest skips "SKIPPED [N]" summary lines, pytest_v2
	// keys full names with spaces, seaborn no longer raises IndexError.
	V5 Rules = "v5"
)

// Valid reports whether r is one of the known rule sets.
func (r Rules) Valid() bool { return r == V4 || r == V5 }

// Parser turns the test output of one instance into a status map. It
// returns an error only where the official parser raises (see
// [ErrParserRaised]); such an instance has no report in the official harness.
type Parser func(log string, rules Rules) (StatusMap, error)

// ErrParserRaised marks a log on which the official parser raises an
// exception (IndexError, or ParseError on malformed XML), which makes the
// official harness drop the instance as an error instead of grading it.
var ErrParserRaised = errors.New("official parser raises an exception")

var registry = map[string]Parser{
	// Python (swebench/harness/log_parsers/python.py)
	"pytest":         parsePytest,
	"pytest_options": parsePytestOptions,
	"pytest_v2":      parsePytestV2,
	"django":         parseDjango,
	"sympy":          parseSympy,
	"seaborn":        parseSeaborn,
	"matplotlib":     parseMatplotlib,
	// Go, Rust, Java
	"gotest":        parseGotest,
	"cargo":         parseCargo,
	"maven":         parseMaven,
	"ant":           parseAnt,
	"gradle_custom": parseGradleCustom,
	// JavaScript
	"jest":      parseJest,
	"jest_json": parseJestJSON,
	"vitest":    parseVitest,
	"karma":     parseKarma,
	"tap":       parseTap,
	"marked":    parseMarked,
	"chart_js":  parseChartJS,
	"react_pdf": parseReactPDF,
	"calypso":   parseCalypso,
	"p5js":      parseP5js,
	// C and C++
	"redis":            parseRedis,
	"jq":               parseJq,
	"doctest":          parseDoctest,
	"micropython_test": parseMicropython,
	"googletest":       parseGoogletest,
	// PHP
	"phpunit": parsePhpunit,
	// Ruby
	"minitest":               parseMinitest,
	"cucumber":               parseCucumber,
	"ruby_unit":              parseRubyUnit,
	"rspec_transformed_json": parseRspecTransformedJSON,
}

// aliases are the official per-repository names (parse_log_astropy =
// parse_log_pytest_v2, ...), accepted by [Lookup].
var aliases = map[string]string{
	"astroid":     "pytest",
	"flask":       "pytest",
	"marshmallow": "pytest",
	"pvlib":       "pytest",
	"pyvista":     "pytest",
	"sqlfluff":    "pytest",
	"xarray":      "pytest",
	"pydicom":     "pytest_options",
	"requests":    "pytest_options",
	"pylint":      "pytest_options",
	"astropy":     "pytest_v2",
	"scikit":      "pytest_v2",
	"sphinx":      "pytest_v2",
}

// Lookup returns the parser registered under name. The official function
// names are accepted too: "parse_log_pytest_v2" and the per-repository
// aliases such as "parse_log_astropy".
func Lookup(name string) (Parser, bool) {
	name, ok := Canonical(name)
	if !ok {
		return nil, false
	}
	return registry[name], true
}

// Canonical returns the registered name behind name ("parse_log_astropy"
// and "astropy" are "pytest_v2"), and whether there is one.
func Canonical(name string) (string, bool) {
	name = strings.TrimPrefix(name, "parse_log_")
	if canonical, ok := aliases[name]; ok {
		name = canonical
	}
	_, ok := registry[name]
	return name, ok
}

// Names returns the canonical parser names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Default is the parser of a repository that is in no table.
const Default = "pytest"

// repoParsers is MAP_REPO_TO_PARSER, with parser names instead of functions.
var repoParsers = map[string]string{
	// Python
	"astropy/astropy":              "pytest_v2",
	"django/django":                "django",
	"marshmallow-code/marshmallow": "pytest",
	"matplotlib/matplotlib":        "matplotlib",
	"mwaskom/seaborn":              "seaborn",
	"pallets/flask":                "pytest",
	"psf/requests":                 "pytest_options",
	"pvlib/pvlib-python":           "pytest",
	"pydata/xarray":                "pytest",
	"pydicom/pydicom":              "pytest_options",
	"pylint-dev/astroid":           "pytest",
	"pylint-dev/pylint":            "pytest_options",
	"pytest-dev/pytest":            "pytest",
	"pyvista/pyvista":              "pytest",
	"scikit-learn/scikit-learn":    "pytest_v2",
	"sqlfluff/sqlfluff":            "pytest",
	"sphinx-doc/sphinx":            "pytest_v2",
	"sympy/sympy":                  "sympy",
	// Go
	"caddyserver/caddy":      "gotest",
	"hashicorp/terraform":    "gotest",
	"prometheus/prometheus":  "gotest",
	"gohugoio/hugo":          "gotest",
	"gin-gonic/gin":          "gotest",
	"flipt-io/flipt":         "gotest",
	"future-architect/vuls":  "gotest",
	"gravitational/teleport": "gotest",
	"navidrome/navidrome":    "gotest",
	// Rust
	"burntsushi/ripgrep": "cargo",
	"sharkdp/bat":        "cargo",
	"astral-sh/ruff":     "cargo",
	"tokio-rs/tokio":     "cargo",
	"uutils/coreutils":   "cargo",
	"nushell/nushell":    "cargo",
	"tokio-rs/axum":      "cargo",
	// Java
	"google/gson":           "maven",
	"apache/druid":          "maven",
	"javaparser/javaparser": "maven",
	"projectlombok/lombok":  "ant",
	"apache/lucene":         "gradle_custom",
	"reactivex/rxjava":      "gradle_custom",
	// JavaScript
	"Automattic/wp-calypso": "calypso",
	"chartjs/Chart.js":      "chart_js",
	"markedjs/marked":       "marked",
	"processing/p5.js":      "p5js",
	"diegomura/react-pdf":   "react_pdf",
	"babel/babel":           "jest",
	"vuejs/core":            "vitest",
	"facebook/docusaurus":   "jest",
	"mrdoob/three.js":       "tap",
	"preactjs/preact":       "karma",
	"axios/axios":           "tap",
	// immutable-js/immutable-js depends on the instance: see ForInstance.
	"immutable-js/immutable-js": "jest",
	// C and C++
	"redis/redis":             "redis",
	"valkey-io/valkey":        "redis",
	"jqlang/jq":               "jq",
	"nlohmann/json":           "doctest",
	"micropython/micropython": "micropython_test",
	"fmtlib/fmt":              "googletest",
	// PHP
	"phpoffice/phpspreadsheet":  "phpunit",
	"laravel/framework":         "phpunit",
	"php-cs-fixer/php-cs-fixer": "phpunit",
	"briannesbitt/carbon":       "phpunit",
	// Ruby. jekyll/jekyll depends on the instance: see ForInstance.
	"fluent/fluentd":    "ruby_unit",
	"faker-ruby/faker":  "ruby_unit",
	"fastlane/fastlane": "rspec_transformed_json",
	"jordansissel/fpm":  "rspec_transformed_json",
	"rubocop/rubocop":   "rspec_transformed_json",
}

// ForRepo returns the official parser name for repo ("owner/name"), or
// [Default] when the repository is in no table.
func ForRepo(repo string) string {
	if name, ok := repoParsers[repo]; ok {
		return name
	}
	return Default
}

// ForInstance is [ForRepo] for one instance. Two repositories pick their
// parser by pull request number: immutable-js (2005 prints Jest's JSON
// transform, 2006 verbose Jest) and jekyll (minitest for 9141, 8047 and
// 8167, cucumber for 8761 and 8771). The official harness raises for any
// other instance of these; this returns "" for them.
func ForInstance(repo, instanceID string) string {
	if repo == "jekyll/jekyll" {
		return jekyllParser(instanceID)
	}
	if repo != "immutable-js/immutable-js" {
		return ForRepo(repo)
	}
	switch instanceID[strings.LastIndex(instanceID, "-")+1:] {
	case "2006":
		return "jest"
	case "2005":
		return "jest_json"
	}
	return ""
}

// Parse runs the parser registered under name.
func Parse(name, log string, rules Rules) (StatusMap, error) {
	p, ok := Lookup(name)
	if !ok {
		return nil, &UnknownParserError{Name: name}
	}
	return p(log, rules)
}

// UnknownParserError reports a parser name that is not registered.
type UnknownParserError struct{ Name string }

func (e *UnknownParserError) Error() string { return "unknown log parser " + strconv.Quote(e.Name) }
