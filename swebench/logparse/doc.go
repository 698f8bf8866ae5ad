// Package logparse reimplements the log parsers of the official SWE-bench
// harness (swebench/harness/log_parsers), rule for rule and quirk for quirk,
// for the v4.1.0 and v5 releases.
//
// A parser reads the test output of one instance and returns a [StatusMap]
// from test name to [Status]. The names are whatever the official text rules
// make of a line, because the dataset's FAIL_TO_PASS and PASS_TO_PASS labels
// were produced by the same rules: pytest names are cut at their first
// whitespace, "SKIPPED [1] file:line" records a test named "[1]" under v4,
// Django tests with a docstring are named by the docstring's first line. A
// cleaner parser would disagree with the labels, so none of this is fixed.
//
// Parsers are looked up by name ([Lookup], [Parse]); [harness.ParserForRepo]
// and [harness.ParserForInstance] give the official parser of a repository. Names are the
// official function names without "parse_log_" ("pytest", "pytest_v2",
// "django", "gotest", ...); the full official names and the per-repository
// aliases ("parse_log_astropy") are accepted too.
//
//	m, err := logparse.Parse(harness.ParserForRepo("django/django"), testOutput, harness.V5)
//	if errors.Is(err, logparse.ErrParserRaised) {
//		// the official harness crashes on this log: no report.json
//	}
//	fmt.Println(m["test_ok (app.tests.ModelTests)"]) // PASSED
//
// Every official parser is here: the Python ones, and those of Go, Rust,
// Java, JavaScript (including the Multimodal ones 5.0.2 added: highlightjs,
// prismjs, eslint, bpmn_js, openlayers, emotion, grommet, next, cypress,
// carbon, lighthouse, quarto_cli, and plotly_js, whose official name
// parse_plotly_js lacks the parse_log_ prefix), C/C++ (redis, jq, doctest,
// micropython_test, googletest), PHP (phpunit) and Ruby (minitest,
// cucumber, ruby_unit, rspec_transformed_json).
//
// Four official parsers only choose another: immutable_js and jekyll by the
// instance id, next and lighthouse by the version. [Bind] and [ParseTarget]
// give them the instance ([Target]); like upstream they raise, when the log
// is parsed, for an instance they do not know:
//
//	m, err := logparse.ParseTarget("parse_log_next", testOutput, harness.V5,
//		logparse.Target{InstanceID: "alibaba-fusion__next-4512", Version: "1.27"})
//
// Where the releases differ the [harness.Rules] say which one is reproduced: under
// harness.V4, maven gives each BUILD result to the latest -Dtest= name, gradle_custom
// reads only "name STATUS" lines and jest keeps a name's trailing space;
// under harness.V5 maven pairs names and results first in, first out, gradle_custom
// also pairs a name with a status on a later line, and jest strips names.
//
// Where the official parser raises (seaborn under v4 on a bare status line,
// django on a lone "FAIL:" line, doctest on malformed XML, ...), the parser returns an error wrapping
// [ErrParserRaised], since the official harness then writes no report.
package logparse
