package logparse_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// TestJavaScriptV5Runners reads the output of each runner the JavaScript
// parsers of 5.0.2 were written for (testdata/js) with those parsers,
// checks the tests each must find, and compares the whole map with
// testdata/js/golden/<log>.<parser>.json (refreshed with -update).
//
// Where the runner is in Debian (Mocha 10.1.0), the log is its real output,
// written by testdata/js/capture.sh. Jest, Karma, Cypress and Deno are not
// packaged and need the npm registry, so their logs are written by hand in
// the exact format of that runner's reporter, as the comment of each case
// says; the differential test also reads all of them with the Python
// transcription of upstream's code.
func TestJavaScriptV5Runners(t *testing.T) {
	type testCase struct {
		log, parser string
		target      logparse.Target
		want        logparse.StatusMap // entries the map must hold
		absent      []string           // names the map must not hold
		count       int                // size of the map
	}
	for _, tc := range []testCase{
		// Real Mocha spec reporter: one suite level only, so the nested
		// suite replaces its parent; timings removed.
		{log: "mocha_spec", parser: "highlightjs", count: 7, want: logparse.StatusMap{
			"markup.escapes angle brackets":             logparse.PASSED,
			"markup.waits for slow highlighting":        logparse.PASSED,
			"nested attributes.reads quoted values":     logparse.PASSED,
			"nested attributes.rejects unquoted values": logparse.FAILED,
			"languages.throws on unknown grammar":       logparse.FAILED,
		}, absent: []string{"markup.handles templates later"}},
		// Real Mocha failures: from "  1)" to the next "...Error",
		// whitespace collapsed. The inline "1) title" of the listing runs
		// on to the details' error, as upstream's lazy pattern does.
		{log: "mocha_spec", parser: "eslint", count: 2, want: logparse.StatusMap{
			"rejects unquoted values languages ✔ detects javascript 2) throws on unknown grammar 5 passing (NNNms) 1 pending 2 failing 1) markup nested attributes rejects unquoted values:": logparse.FAILED,
			"languages throws on unknown grammar:": logparse.FAILED,
		}},
		// Real Mocha after Lighthouse's "running N test files" line: suites
		// kept by indentation.
		{log: "mocha_spec_lighthouse", parser: "lighthouse_mocha", count: 7, want: logparse.StatusMap{
			"markup - escapes angle brackets":                      logparse.PASSED,
			"markup - waits for slow highlighting":                 logparse.PASSED,
			"markup - nested attributes - reads quoted values":     logparse.PASSED,
			"markup - nested attributes - rejects unquoted values": logparse.FAILED,
			"languages - throws on unknown grammar":                logparse.FAILED,
		}},
		{log: "mocha_spec_lighthouse", parser: "lighthouse", target: logparse.Target{Version: "10.0"}, count: 7, want: logparse.StatusMap{
			"languages - detects javascript": logparse.PASSED,
		}},
		// Real Mocha JSON reporter after PrismJS's traced command.
		{log: "mocha_json_prism", parser: "prismjs", count: 3, want: logparse.StatusMap{
			"Testing language 'css' – should pass test case 'css/selector'":  logparse.PASSED,
			"Testing language 'css' – should pass test case 'css/url'":       logparse.FAILED,
			"Testing language 'markup' – should pass test case 'markup/tag'": logparse.PASSED,
		}},
		// Real Mocha JSON reporter, Lighthouse before version 3.
		{log: "mocha_json_lighthouse", parser: "lighthouse", target: logparse.Target{Version: "2.9"}, count: 7, want: logparse.StatusMap{
			"markup escapes angle brackets":                    logparse.PASSED,
			"markup nested attributes rejects unquoted values": logparse.FAILED,
			"languages throws on unknown grammar":              logparse.FAILED,
		}},
		// Real Mocha JSON reporter in two packages, each followed by the
		// traced "cd ../..".
		{log: "mocha_json_cypress", parser: "cypress", count: 5, want: logparse.StatusMap{
			"lib/routes serves the runner":                             logparse.PASSED,
			"lib/routes rejects bad origins":                           logparse.FAILED,
			"Testing language 'css' – should pass test case 'css/url'": logparse.FAILED,
		}},
		// Jest's default reporter (hand-written): "PASS path (6.214 s)".
		{log: "jest_files", parser: "emotion", count: 4, want: logparse.StatusMap{
			"packages/react/__tests__/css.js (6.214 s)": logparse.PASSED,
			"packages/styled/__tests__/index.js":        logparse.FAILED,
		}},
		{log: "jest_files", parser: "grommet", count: 4, want: logparse.StatusMap{
			"packages/react/__tests__/css.js":    logparse.PASSED,
			"packages/react/__tests__/legacy.js": logparse.PASSED,
			"packages/styled/__tests__/index.js": logparse.FAILED,
		}},
		{log: "jest_files", parser: "carbon", count: 4, want: logparse.StatusMap{
			"packages/react/__tests__/css.js":    logparse.PASSED,
			"packages/react/__tests__/legacy.js": logparse.PASSED,
			"packages/cache/__tests__/index.js":  logparse.PASSED,
		}},
		{log: "jest_files", parser: "lighthouse", target: logparse.Target{Version: "12.0"}, count: 4, want: logparse.StatusMap{
			"packages/styled/__tests__/index.js": logparse.FAILED,
		}},
		// Karma's progress reporter (hand-written), PhantomJS after the
		// ESC[2K that erases the progress line, and Chrome Headless.
		{log: "karma_bpmn", parser: "bpmn_js", count: 4, want: logparse.StatusMap{
			"features/modeling - ModelingSpec should connect shapes ": logparse.FAILED,
			"features/modeling - ModelingSpec should remove shapes ":  logparse.FAILED,
			"features/modeling - ModelingSpec should move labels ":    logparse.FAILED,
			"features/modeling - ModelingSpec should resize ":         logparse.FAILED,
		}},
		// Karma and Mocha failures and rendering mismatches (hand-written).
		// Mocha's failure runs to the first "Error:", inside "TypeError:".
		{log: "karma_openlayers", parser: "openlayers", count: 4, want: logparse.StatusMap{
			"ol/Map #render calls renderFrame":                        logparse.FAILED,
			"ol/source/Vector #addFeature fires addfeature":           logparse.FAILED,
			"ol/format/GeoJSON readFeature reads null geometry: Type": logparse.FAILED,
			"heatmap-layer": logparse.FAILED,
		}},
		// karma-spec-reporter under xvfb-run (hand-written).
		{log: "karma_next", parser: "next_v1", count: 4, want: logparse.StatusMap{
			"Button - render - should render with type": logparse.PASSED,
			"Button - render - should render disabled":  logparse.FAILED,
			"Button - behavior - should click":          logparse.PASSED,
			"Group - should render group":               logparse.PASSED,
		}, absent: []string{"Group - after the summary is not read"}},
		{log: "karma_next", parser: "next", target: logparse.Target{Version: "1.26"}, count: 4, want: logparse.StatusMap{
			"Group - should render group": logparse.PASSED,
		}},
		// Cypress run (hand-written): a passing test without a timing is
		// not recorded.
		{log: "cypress_next", parser: "next", target: logparse.Target{Version: "1.27"}, count: 4, want: logparse.StatusMap{
			"Button: should render":         logparse.PASSED,
			"Button: should render loading": logparse.PASSED,
			"Button: should be disabled":    logparse.FAILED,
			"Input: should focus":           logparse.PASSED,
		}, absent: []string{"Button: should render without timing"}},
		// Deno's test runner (hand-written): temporary paths numbered, a
		// test with steps first FAILED (no status on its first line) then
		// PASSED, a line with no status and no later result FAILED. The
		// "/tmp/x/" form loses its slash ("/tmp/0doc.qmd").
		{log: "deno_quarto", parser: "quarto_cli", count: 4, want: logparse.StatusMap{
			"[smoke] > quarto render docs/test.qmd --to docx":  logparse.PASSED,
			"[smoke] > quarto render /tmp/0doc.qmd --to docx":  logparse.FAILED,
			"[smoke] > quarto render docs/steps.qmd --to html": logparse.PASSED,
			"[unit] > yaml-intelligence /tmp/1":                logparse.FAILED,
		}, absent: []string{"[smoke] > after errors"}},
		// karma-verbose-reporter's "Suites and tests results" for plotly.js
		// (hand-written in its format, statuses coloured as it prints
		// them). Upstream's rules: "skipped" holds no "ok", so FAILED; a
		// test after a nested suite, indented like that suite, loses every
		// suite name; the "Browser results" lines are no suites.
		{log: "karma_verbose_plotly", parser: "plotly_js", count: 6, want: logparse.StatusMap{
			"Test scatter.should draw lines":                  logparse.PASSED,
			"Test scatter.should draw markers":                logparse.FAILED,
			"Test scatter.hover.should show the label":        logparse.PASSED,
			"Test scatter.hover.should skip gaps":             logparse.FAILED,
			"should restyle":                                  logparse.PASSED,
			"Plotly.react.should not redraw unchanged traces": logparse.PASSED,
		}},
	} {
		t.Run(tc.log+"/"+tc.parser, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "js", tc.log+".log"))
			require.NoError(t, err)
			log := string(raw)
			if tc.parser == "eslint" {
				// Mocha prints the run's duration, which changes per capture.
				log = normaliseDuration(log)
			}
			for _, rules := range []harness.Rules{harness.V4, harness.V5} {
				got, err := logparse.ParseTarget(tc.parser, log, rules, tc.target)
				require.NoError(t, err)
				for name, status := range tc.want {
					assert.Equal(t, status, got[name], "%s under %s", name, rules)
				}
				for _, name := range tc.absent {
					assert.NotContains(t, got, name)
				}
				assert.Len(t, got, tc.count, "%v", got)
				compareGolden(t, filepath.Join("testdata", "js", "golden", tc.log+"."+tc.parser+tc.target.Version+"."+string(rules)+".json"), got)
			}
		})
	}
}

// normaliseDuration replaces Mocha's "N passing (123ms)" duration.
func normaliseDuration(log string) string {
	i := strings.Index(log, "passing (")
	if i < 0 {
		return log
	}
	j := strings.Index(log[i:], "ms)")
	return log[:i] + "passing (NNNms)" + log[i+j+len("ms)"):]
}

// TestDispatchingParsers checks the four parsers that pick another by
// instance or version, and that an instance upstream does not know raises
// when the log is parsed.
func TestDispatchingParsers(t *testing.T) {
	jestLog := "  ✓ renders (3 ms)\n"
	jestJSON := "[PASSED] renders\n"
	type testCase struct {
		name, parser, log string
		target            logparse.Target
		want              logparse.StatusMap
		raises            bool
	}
	for _, tc := range []testCase{
		{"immutable 2006 reads jest", "immutable_js", jestLog, logparse.Target{InstanceID: "immutable-js__immutable-js-2006"}, logparse.StatusMap{"renders": logparse.PASSED}, false},
		{"immutable 2005 reads jest_json", "parse_log_immutable_js", jestJSON, logparse.Target{InstanceID: "immutable-js__immutable-js-2005"}, logparse.StatusMap{"renders": logparse.PASSED}, false},
		{"immutable other raises", "immutable_js", jestLog, logparse.Target{InstanceID: "immutable-js__immutable-js-1"}, nil, true},
		{"jekyll 9141 reads minitest", "parse_log_jekyll", "Jekyll::Site. builds = 0.01 s = .\n", logparse.Target{InstanceID: "jekyll__jekyll-9141"}, logparse.StatusMap{"Jekyll::Site": logparse.PASSED}, false},
		{"jekyll 8771 reads cucumber", "jekyll", "Scenario: builds site ...F\n", logparse.Target{InstanceID: "jekyll__jekyll-8771"}, logparse.StatusMap{"Scenario: builds site": logparse.FAILED}, false},
		{"jekyll other raises", "jekyll", "", logparse.Target{InstanceID: "jekyll__jekyll-1"}, nil, true},
		{"jekyll without a dash raises", "jekyll", "", logparse.Target{InstanceID: "jekyll"}, nil, true},
		{"lighthouse unreadable version raises", "lighthouse", "", logparse.Target{Version: "v10"}, nil, true},
		{"lighthouse underscore version is 10", "lighthouse", "PASS a.js\n", logparse.Target{Version: "1_0"}, logparse.StatusMap{"a.js": logparse.PASSED}, false},
		{"lighthouse without version raises", "lighthouse", "", logparse.Target{}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logparse.ParseTarget(tc.parser, tc.log, harness.V5, tc.target)
			if tc.raises {
				require.ErrorIs(t, err, logparse.ErrParserRaised)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, name := range []string{"parse_log_jekyll", "parse_log_immutable_js", "parse_log_next", "parse_log_lighthouse", "parse_log_quarto_cli"} {
		canonical, ok := logparse.Canonical(name)
		assert.True(t, ok, "%s is a 5.0.2 log_parser name", name)
		assert.Contains(t, logparse.Names(), canonical)
	}
}
