package spec

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The official per-repository, per-version specifications of the non-Python
// SWE-bench repositories (SWE-bench Multilingual and the JavaScript
// repositories of SWE-bench Multimodal): Go, Rust, JavaScript/TypeScript,
// Java, PHP, Ruby and C/C++.
//
// The official harness writes one eval.sh shape for all of them (ScriptCommon):
// the test patch applied, then each build command on its own line, then each
// test command on its own line between the output markers. Test files are
// never appended as directives. Only these two fields reach eval.sh, so only
// they are kept: install, pre_install (the Lombok test target, the Gradle
// logging patches, the pinned Cargo.lock files) and docker_specs (language
// versions) run when the official image is built.
//
// A version missing from a table: the Multimodal repositories' versions are
// release lines, as in the Python tables, and the latest one stands in
// (commonLatest). Elsewhere versions are pull request numbers whose test
// commands name that pull request's tests, so another entry would run the
// wrong tests: a missing version is an error (ErrUnknownVersion), except in
// a table of a single entry, which the official harness uses for any
// version.
//
// Left out because their commands are derived per instance rather than
// looked up: Automattic/wp-calypso (from the test patch's paths, see
// calypso.go), the SWE-bench Pro repositories (from the row's
// selected_test_files_to_run).

// ErrUnknownVersion is returned by For when a repository has an official
// non-Python table without an entry for the instance's version, and neither
// the row's eval_script nor an override supplies the test command.
var ErrUnknownVersion = errors.New("version not in the official table")

// commonSpec is one version's entry of a non-Python table.
type commonSpec struct {
	build []string // eval.sh lines after the test patch is applied
	test  []string // eval.sh lines between the output markers
}

// testCmd is the test commands as TestSpec.TestCmd holds them: one per
// line, which is how upstream writes a list of test commands into eval.sh.
func (c commonSpec) testCmd() string { return strings.Join(c.test, "\n") }

func tests(test ...string) commonSpec { return commonSpec{test: test} }

func buildTests(build []string, test ...string) commonSpec {
	return commonSpec{build: build, test: test}
}

// forVersions gives several versions the same entry.
func forVersions(c commonSpec, versions ...string) map[string]commonSpec {
	m := make(map[string]commonSpec, len(versions))
	for _, v := range versions {
		m[v] = c
	}
	return m
}

// mergeVersions joins version maps; later maps win.
func mergeVersions(maps ...map[string]commonSpec) map[string]commonSpec {
	out := map[string]commonSpec{}
	for _, m := range maps {
		for v, c := range m {
			out[v] = c
		}
	}
	return out
}

// prefixed puts prefix before each item.
func prefixed(prefix string, items ...string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = prefix + it
	}
	return out
}

// commonLatest names, for the tables versioned by release line, the
// version whose entry stands in for a missing one.
var commonLatest = map[string]string{
	"chartjs/Chart.js":    "4.4",
	"markedjs/marked":     "5.0",
	"processing/p5.js":    "1.9",
	"diegomura/react-pdf": "2.0",
}

// lookupCommon finds the entry of repo at version. ok is false when repo
// has no non-Python table; err wraps ErrUnknownVersion when it has one
// without that version. fallback names the version used instead, when the
// latest release line or the table's single entry stood in.
func lookupCommon(repo, version string) (c commonSpec, fallback string, ok bool, err error) {
	t, ok := commonTables[repo]
	if !ok {
		return commonSpec{}, "", false, nil
	}
	if c, found := t[version]; found {
		return c, "", true, nil
	}
	if latest, ok := commonLatest[repo]; ok {
		return t[latest], latest, true, nil
	}
	if len(t) == 1 {
		for v, c := range t {
			return c, v, true, nil
		}
	}
	known := make([]string, 0, len(t))
	for v := range t {
		known = append(known, v)
	}
	sort.Strings(known)
	return commonSpec{}, "", true, fmt.Errorf("%w: %s has no entry for version %q (it has %s)",
		ErrUnknownVersion, repo, version, strings.Join(known, ", "))
}

var commonTables = map[string]map[string]commonSpec{
	// Go
	"caddyserver/caddy": {
		"6411": tests(`go test -v . -run "TestReplacerNew*"`),
		"6345": tests(`go test -v ./caddytest/integration`),
		"6115": tests(`go test -v ./modules/caddyhttp/reverseproxy`),
		"6051": tests(`go test -v ./caddyconfig/caddyfile`),
		"5404": tests(`go test -v ./caddyconfig/caddyfile`),
		"6370": tests(`go test -v ./cmd`),
		"6350": tests(`go test -v ./caddytest/integration -run "TestCaddyfileAdapt*"`),
		"6288": tests(`go test -v ./caddytest/integration -run "TestCaddyfileAdapt*"`),
		"5995": tests(`go test -v ./caddytest/integration -run "^TestUriReplace"`),
		"4943": tests(`go test -v ./modules/logging`),
		"5626": tests(`go test -v ./caddyconfig/httpcaddyfile -run "Test.*Import"`),
		"5761": tests(`go test -v ./caddyconfig/caddyfile -run "TestLexer.*"`),
		"5870": tests(`go test -v . -run "TestUnsyncedConfigAccess"`),
		"4774": tests(`go test -v ./caddytest/integration -run "TestCaddyfileAdapt*"`),
	},
	"hashicorp/terraform": {
		"35611": tests(`go test -v ./internal/terraform -run "^TestContext2Apply_provisioner"`),
		"35543": tests(`go test -v ./internal/terraform -run "^TestContext2Plan_import"`),
		"34900": tests(`go test -v ./internal/terraform -run "(^TestContext2Apply|^TestContext2Plan).*[Ss]ensitive"`),
		"34580": tests(`go test -v ./internal/command -run "^TestFmt"`),
		"34814": tests(`go test -v ./internal/builtin/provisioners/remote-exec`),
	},
	"prometheus/prometheus": {
		"14861": tests(`go test -v ./promql -run "^TestEngine"`),
		"13845": tests(`go test -v ./promql ./model/labels -run "^(TestRangeQuery|TestLabels)"`),
		"12874": tests(`go test -v ./tsdb -run "^TestHead"`),
		"11859": tests(`go test -v ./tsdb -run "^TestSnapshot"`),
		"10720": tests(`go test -v ./promql -run "^TestEvaluations"`),
		"10633": tests(`go test -v ./discovery/puppetdb -run "TestPuppetDBRefreshWithParameters"`),
		"9248":  tests(`go test -v ./promql -run "^TestEvaluations"`),
		"15142": tests(`go test -v ./tsdb -run "^TestHead"`),
	},
	"gohugoio/hugo": {
		"12768": tests(`go test -v ./markup/goldmark/blockquotes/...`),
		"12579": tests(`go test -v ./resources/page -run "^TestGroupBy"`),
		"12562": tests(`go test -v ./hugolib/... -run "^TestGetPage[^/]"`),
		"12448": tests(`go test -v ./hugolib/... -run "^TestRebuild"`),
		"12343": tests(`go test -v ./resources/page/... -run "^Test.*Permalink"`),
		"12204": tests(`go test -v ./tpl/tplimpl -run "^TestEmbedded"`),
		"12171": tests(`go test -v ./hugolib -run "^Test.*Pages"`),
	},
	"gin-gonic/gin": {
		"4003": tests(`go test . -v -run "TestMethodNotAllowedNoRoute"`),
		"3820": tests(`go test -v ./binding -run "^TestMapping"`),
		"3741": tests(`go test -v . -run "^TestColor"`),
		"2755": tests(`go test -v . -run "^TestTree"`),
		"3227": tests(`go test -v . -run "^TestRedirect"`),
		"2121": tests(`go test -v ./... -run "^Test.*Reader"`),
		"1957": tests(`go test -v . -run "^TestContext.*Bind"`),
		"1805": tests(`go test -v . -run "^Test.*Router"`),
	},

	// Rust
	"burntsushi/ripgrep": {
		"2576": tests(`RUSTFLAGS=-Awarnings cargo test --package ripgrep --test integration -- regression`),
		"2209": tests(`RUSTFLAGS=-Awarnings cargo test --package ripgrep --test integration -- regression::r2208 --exact`),
	},
	"sharkdp/bat": {
		"3108": tests(batTests + "pag"),
		"2835": tests(batTests + "header"),
		"2650": tests(batTests + "map_syntax"),
		"2393": tests(batTests + "cache_"),
		"2201": tests(batTests + "pag"),
		"2260": tests(batTests + "syntax"),
		"1892": tests(batTests + "ignored_suffix_arg"),
		"562":  tests(batTests + "cache"),
	},
	"astral-sh/ruff": {
		"15626": tests(`cargo test --package ruff_linter --lib rules::flake8_simplify::tests`),
		"15543": tests(`cargo test --package ruff_linter --lib rules::pyupgrade`),
		"15443": tests(`cargo test --package ruff_linter --lib rules::flake8_bandit`),
		"15394": tests(`cargo test --package ruff_linter --lib rules::flake8_pie`),
		"15356": tests(`cargo test --package ruff_linter --lib rules::pycodestyle`),
		"15330": tests(`cargo test --package ruff_linter --lib rules::eradicate`),
		"15309": tests(`cargo test --package ruff_linter 'f52'`),
	},
	"tokio-rs/tokio": {
		"6724": tests(`RUSTFLAGS=-Awarnings cargo test --test io_write_all_buf --no-fail-fast`),
		"6838": tests(`RUSTFLAGS=-Awarnings cargo test --test uds_stream --no-fail-fast`),
		"6752": tests(`RUSTFLAGS=-Awarnings cargo test --test time_delay_queue --no-fail-fast`),
		"4867": tests(`RUSTFLAGS=-Awarnings cargo test --test sync_broadcast --no-fail-fast`),
		"4898": tests(`RUST_BACKTRACE=1 RUSTFLAGS="-Awarnings --cfg tokio_unstable" cargo test --features full --test rt_metrics`),
		"6603": tests(`RUSTFLAGS=-Awarnings cargo test --test sync_mpsc --no-fail-fast`),
		"6551": tests(`RUSTFLAGS="-Awarnings --cfg tokio_unstable" cargo test --features full --test rt_metrics --no-fail-fast`),
		"4384": tests(`RUSTFLAGS=-Awarnings cargo test --package tokio --test net_types_unwind --features full --no-fail-fast`),
		"7139": tests(`RUSTFLAGS="-Awarnings --cfg tokio_unstable" cargo test --test fs_file --no-fail-fast`),
	},
	"uutils/coreutils": {
		"6690": tests(`cargo test --no-fail-fast -- test_cp_cp test_cp_same_file test_cp_multiple_files test_cp_single_file test_cp_no_file`),
		"6731": tests(`cargo test backslash --no-fail-fast`),
		"6575": tests(`cargo test cksum --no-fail-fast`),
		"6682": tests(`cargo test mkdir --no-fail-fast`),
		"6377": tests(`cargo test test_env --no-fail-fast`),
	},
	"nushell/nushell": {
		"13246": buildTests(cargoBuild, `cargo test -p nu-command --no-fail-fast --test main find::`),
		"12950": tests(`cargo test external_arguments --no-fail-fast`),
		"12901": tests(`cargo test --no-fail-fast shell::env`),
		"13831": buildTests(cargoBuild, `cargo test -p nu-command --no-fail-fast split_column`),
		"13605": buildTests(cargoBuild, `cargo test -p nu-command --no-fail-fast ls::`),
	},
	"tokio-rs/axum": {
		"2096": tests(axumLib + `-- routing::tests::fallback`),
		"1934": tests(axumLib + `-- routing::tests::fallback`),
		"1730": tests(axumLib + `-- routing::tests::mod state`),
		"1119": tests(axumLib + `slash`),
		"734":  tests(axumLib + `-- routing::tests::head`),
		"691":  tests(axumLib + `-- routing::tests::nest::nesting_router_at_root --exact`),
		"682":  tests(axumLib + `trailing -- with_trailing_slash_post without_trailing_slash_post`),
	},

	// JavaScript and TypeScript
	"chartjs/Chart.js": mergeVersions(
		forVersions(tests("pnpm install", "pnpm run build", xvfb+` su chromeuser -c "`+chartKarma+`./karma.conf.cjs`+chartKarmaFlags+`"`),
			"4.0", "4.1", "4.2", "4.3", "4.4"),
		forVersions(tests("npm install", "npm run build", xvfb+` su chromeuser -c "`+chartKarma+`./karma.conf.js`+chartKarmaFlags+`"`),
			"3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8"),
		forVersions(tests("npm install", "gulp build", xvfb+` su chromeuser -c "gulp test"`),
			"2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9"),
	),
	"markedjs/marked": forVersions(tests(`./node_modules/.bin/jasmine --no-color --config=jasmine.json`),
		"0.3", "0.5", "0.6", "0.7", "1.0", "1.1", "1.2", "2.0", "3.9", "4.0", "4.1", "5.0"),
	// Upstream's test command is one string holding a newline: two lines in
	// eval.sh.
	"processing/p5.js": forVersions(tests(
		`sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js`,
		`stdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force`),
		"0.10", "0.2", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0", "1.1",
		"1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9"),
	"diegomura/react-pdf": mergeVersions(
		forVersions(tests(`NODE_OPTIONS="--experimental-vm-modules" ./node_modules/.bin/jest --no-color`), "2.0"),
		forVersions(tests(`./node_modules/.bin/jest --no-color`), "1.0", "1.1", "1.2"),
	),
	"babel/babel": {
		"14532": buildTests(makeBuild, `yarn jest babel-generator --verbose`),
		"13928": buildTests(makeBuild, `yarn jest babel-parser -t "arrow" --verbose`),
		"15649": buildTests(makeBuild, `yarn jest packages/babel-traverse/test/scope.js --verbose`),
		"15445": buildTests(makeBuild, `yarn jest packages/babel-generator/test/index.js -t "generation " --verbose`),
		"16130": buildTests(makeBuild, `yarn jest babel-helpers --verbose`),
	},
	"vuejs/core": {
		"11899": buildTests([]string{"pnpm run build compiler-sfc"},
			`pnpm run test packages/compiler-sfc/__tests__/compileStyle.spec.ts --no-watch --reporter=verbose`),
		"11870": tests(`pnpm run test packages/runtime-core/__tests__/helpers/renderList.spec.ts --no-watch --reporter=verbose`),
		"11739": tests(`pnpm run test packages/runtime-core/__tests__/hydration.spec.ts --no-watch --reporter=verbose -t "mismatch handling"`),
		"11915": tests(`pnpm run test packages/compiler-core/__tests__/parse.spec.ts --no-watch --reporter=verbose -t "Element"`),
		"11589": tests(`pnpm run test packages/runtime-core/__tests__/apiWatch.spec.ts --no-watch --reporter=verbose`),
	},
	"facebook/docusaurus": {
		"10309": tests(`yarn test packages/docusaurus-plugin-content-docs/src/client/__tests__/docsClientUtils.test.ts --verbose`),
		"10130": tests(`yarn test packages/docusaurus/src/server/__tests__/brokenLinks.test.ts --verbose`),
		"9897":  tests(`yarn test packages/docusaurus-utils/src/__tests__/markdownUtils.test.ts --verbose`),
		"9183":  tests(`yarn test packages/docusaurus-theme-classic/src/__tests__/options.test.ts --verbose`),
		"8927":  tests(`yarn test packages/docusaurus-utils/src/__tests__/markdownLinks.test.ts --verbose`),
	},
	"immutable-js/immutable-js": {
		"2006": buildTests(npmBuild, `npx jest __tests__/Range.ts --verbose`),
		"2005": buildTests(npmBuild, `npx jest __tests__/OrderedMap.ts __tests__/OrderedSet.ts --silent --json | `+jestJSONToLines),
	},
	"mrdoob/three.js": {
		"27395": tests(`npx qunit test/unit/src/math/Sphere.tests.js`),
		"26589": tests(`npx qunit test/unit/src/objects/Line.tests.js test/unit/src/objects/Mesh.tests.js test/unit/src/objects/Points.tests.js`),
		"25687": tests(`npx qunit test/unit/src/core/Object3D.tests.js -f "/json|clone|copy/i"`),
	},
	"preactjs/preact": {
		"4152": tests(preactKarma + `test/browser/components.test.js"`),
		"4316": tests(preactKarma + `test/browser/events.test.js"`),
		"4245": tests(preactKarma + `hooks/test/browser/useId.test.js"`),
		"4182": tests(preactKarma + `hooks/test/browser/errorBoundary.test.js"`),
		"4436": tests(preactKarma + `test/browser/refs.test.js"`),
		"3763": tests(preactKarma + `test/browser/lifecycles/componentDidMount.test.js"`),
		"3739": tests(preactKarma + `hooks/test/browser/useState.test.js"`),
		"3689": tests(preactKarma + `hooks/test/browser/errorBoundary.test.js"`),
		"3567": tests(preactKarma + `hooks/test/browser/useEffect.test.js"`),
		"3562": tests(preactKarma + `compat/test/browser/render.test.js"`),
		"3454": tests(preactKarma + `test/browser/svg.test.js"`),
		"3345": tests(preactKarma + `hooks/test/browser/useEffect.test.js"`),
		"3062": tests(preactKarma + `test/browser/render.test.js"`),
		"3010": tests(preactKarma + `test/browser/render.test.js"`),
		"2927": tests(preactKarma + `test/browser/render.test.js"`),
		"2896": tests(preactKarma + `compat/test/browser/memo.test.js"`),
		"2757": tests(preactKarma + `test/browser/render.test.js"`),
	},
	"axios/axios": {
		"5892": tests(`npx mocha test/unit/adapters/http.js -R tap -g 'compression'`),
		// The fix adds a dependency, so it is installed again.
		"5316": buildTests([]string{"npm install"}, `npx mocha test/unit/adapters/http.js -R tap -g 'FormData'`),
		"4738": tests(`timeout 10s npx mocha -R tap test/unit/adapters/http.js -g 'timeout'`),
		"4731": tests(`npx mocha -R tap test/unit/adapters/http.js -g 'body length'`),
		"6539": tests(`npx mocha -R tap test/unit/regression/SNYK-JS-AXIOS-7361793.js`),
		"5085": tests(`npx mocha -R tap test/unit/regression/bugs.js`),
	},

	// Java
	"google/gson": {
		"2158": tests(mvnd("gson", prefixed("com.google.gson.functional.PrimitiveTest#",
			"testByteSerialization", "testShortSerialization", "testIntSerialization",
			"testLongSerialization", "testFloatSerialization", "testDoubleSerialization",
			"testPrimitiveIntegerAutoboxedSerialization",
			"testPrimitiveIntegerAutoboxedInASingleElementArraySerialization",
			"testReallyLongValuesSerialization", "testPrimitiveLongAutoboxedSerialization")...)...),
		"2024": tests(mvnd("gson", prefixed("com.google.gson.functional.",
			"FieldNamingTest#testUpperCaseWithUnderscores",
			"NamingPolicyTest#testGsonWithUpperCaseUnderscorePolicySerialization",
			"NamingPolicyTest#testGsonWithUpperCaseUnderscorePolicyDeserialiation")...)...),
		"2479": tests(mvnd("gson", prefixed("com.google.gson.GsonBuilderTest#",
			"testRegisterTypeAdapterForObjectAndJsonElements",
			"testRegisterTypeHierarchyAdapterJsonElements",
			"testModificationAfterCreate")...)...),
		"2134": tests(mvnd("gson", prefixed("com.google.gson.internal.bind.util.ISO8601UtilsTest#",
			"testDateParseInvalidDay", "testDateParseInvalidMonth", "testDateParseWithDefaultTimezone")...)...),
		"2061": tests(mvnd("gson", prefixed("com.google.gson.",
			"stream.JsonReaderTest#testHasNextEndOfDocument",
			"internal.bind.JsonTreeReaderTest#testHasNext_endOfDocument",
			"stream.JsonReaderTest#testReadEmptyObject",
			"stream.JsonReaderTest#testReadEmptyArray",
			"internal.bind.JsonTreeReaderTest#testSkipValue_emptyJsonObject",
			"internal.bind.JsonTreeReaderTest#testSkipValue_filledJsonObject")...)...),
		"2311": tests(mvnd("gson", prefixed("com.google.gson.JsonPrimitiveTest#",
			"testEqualsIntegerAndBigInteger", "testLongEqualsBigInteger", "testEqualsAcrossTypes")...)...),
		"1100": tests(mvnd("gson", prefixed("com.google.gson.DefaultDateTypeAdapterTest#",
			"testNullValue", "testDatePattern", "testInvalidDatePattern")...)...),
		"1093": tests(mvnd("gson", prefixed("com.google.gson.stream.JsonWriterTest#",
			"testNonFiniteDoublesWhenLenient", "testNonFiniteBoxedDoublesWhenLenient",
			"testNonFiniteDoubles", "testNonFiniteBoxedDoubles", "testDoubles")...)...),
		"1014": tests(mvnd("gson", prefixed("com.google.gson.internal.bind.JsonTreeReaderTest#",
			"testSkipValue_emptyJsonObject", "testSkipValue_filledJsonObject")...)...),
	},
	"apache/druid": {
		"15402": tests(mvnd("processing", prefixed("org.apache.druid.query.groupby.GroupByQueryQueryToolChestTest#",
			"testCacheStrategy", "testResultLevelCacheKeyWithSubTotalsSpec", "testMultiColumnCacheStrategy")...)...),
		"14092": tests(mvnd("server", prefixed("org.apache.druid.discovery.DruidLeaderClientTest#",
			"test503ResponseFromServerAndCacheRefresh", "testServerFailureAndRedirect")...)...),
		"14136": tests(mvnd("processing", prefixed("org.apache.druid.timeline.VersionedIntervalTimelineTest#",
			"testOverlapSecondContainsFirstZeroLengthInterval",
			"testOverlapSecondContainsFirstZeroLengthInterval2",
			"testOverlapSecondContainsFirstZeroLengthInterval3",
			"testOverlapSecondContainsFirstZeroLengthInterval4",
			"testOverlapFirstContainsSecond",
			"testOverlapSecondContainsFirst")...)...),
		"13704": tests(mvnd("processing", prefixed("org.apache.druid.query.aggregation.post.ArithmeticPostAggregatorTest#",
			"testPow", "testDiv", "testQuotient")...)...),
		"16875": tests(mvnd("server", prefixed("org.apache.druid.server.metrics.WorkerTaskCountStatsMonitorTest#",
			"testMonitorWithPeon", "testMonitorWithNulls", "testMonitorIndexer")...)...),
	},
	// The build step recompiles the module after the test patch is applied.
	"javaparser/javaparser": {
		"4561": buildTests([]string{"./mvnw clean install -B -pl javaparser-symbol-solver-testing -DskipTests -am"},
			prefixed("./mvnw test -B -pl javaparser-symbol-solver-testing -Dtest=", "Issue4560Test", "JavaSymbolSolverTest")...),
		"4538": buildTests([]string{"./mvnw clean install -B -pl javaparser-core-testing -DskipTests -am"},
			prefixed("./mvnw test -B -pl javaparser-core-testing -Dtest=", "NodeTest", "NodePositionTest")...),
	},
	// "ant test.instance" is a target the official image adds to
	// buildScripts/tests.ant.xml (pre_install), naming the instance's tests.
	"projectlombok/lombok": forVersions(buildTests([]string{"ant test.compile"}, "ant test.instance"),
		"3602", "3312", "3697", "3326", "3674", "3594", "3422", "3215", "3486", "3042",
		"3052", "2792", "3571", "3479", "3371", "3350", "3009"),
	"apache/lucene": {
		"13494": tests(gradleTests + `org.apache.lucene.facet.TestStringValueFacetCounts`),
		"13704": tests(gradleTests + `org.apache.lucene.search.TestLatLonDocValuesQueries`),
		"13301": tests(gradleTests + `TestXYPoint.testEqualsAndHashCode -Dtests.seed=3ABEFE4D876DD310 -Dtests.nightly=true -Dtests.locale=es-419 -Dtests.timezone=Asia/Ulaanbaatar -Dtests.asserts=true -Dtests.file.encoding=UTF-8`),
		"12626": tests(gradleTests + `org.apache.lucene.index.TestIndexWriter`),
		"12212": tests(gradleTests + `org.apache.lucene.facet.TestDrillSideways`),
		"13170": tests(gradleTests + `org.apache.lucene.analysis.opennlp.TestOpenNLPSentenceBreakIterator -Ptests.useSecurityManager=false`),
		"12196": tests(gradleTests + `org.apache.lucene.queryparser.classic.TestMultiFieldQueryParser`),
		"12022": tests(gradleTests + `org.apache.lucene.document.TestLatLonShape`),
		"11760": tests(gradleTests + `org.apache.lucene.queries.intervals.TestIntervalBuilder`),
	},
	"reactivex/rxjava": {
		"7597": tests(gradleTests + `io.reactivex.rxjava3.internal.operators.observable.ObservableSwitchTest`),
	},

	// PHP
	"phpoffice/phpspreadsheet": {
		"4313": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Reader/Ods/FormulaTranslatorTest.php"),
		"4214": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Calculation/Functions/MathTrig/RoundDownTest.php"),
		"4186": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Writer/Xlsx/FunctionPrefixTest.php"),
		"4114": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Worksheet/Issue4112Test.php"),
		"3940": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Worksheet/WorksheetTest.php"),
		"3903": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Shared/StringHelperTest.php"),
		"3570": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Calculation/Functions/LookupRef/VLookupTest.php"),
		"3463": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Writer/Xlsx/FunctionPrefixTest.php"),
		"3469": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Style/StyleTest.php"),
		"3659": tests("./" + phpunit + "tests/PhpSpreadsheetTests/Worksheet/Table/Issue3635Test.php"),
	},
	"laravel/framework": {
		"53914": tests(phpunit + "tests/Integration/Database/DatabaseConnectionsTest.php"),
		"53206": tests(phpunit + "tests/Support/SupportJsTest.php"),
		"52866": tests(phpunit + "tests/Container/ContextualAttributeBindingTest.php"),
		"52684": tests(phpunit + "tests/Support/SupportStrTest.php"),
		"52680": tests(phpunit + "tests/Database/DatabaseEloquentInverseRelationTest.php"),
		"52451": tests(phpunit + "tests/Validation/ValidationValidatorTest.php --filter 'custom'"),
		"53949": tests(phpunit + "tests/Support/OnceTest.php"),
		"51890": tests(phpunit + "tests/Validation/ValidationValidatorTest.php --filter 'attribute'"),
		"51195": tests(phpunit + "tests/View/Blade/BladeVerbatimTest.php"),
		"48636": tests(phpunit + "tests/Database/DatabaseEloquentModelTest.php"),
		"48573": tests(phpunit + "tests/Cache/CacheArrayStoreTest.php"),
		"46234": tests(phpunit + "tests/Routing/RoutingUrlGeneratorTest.php"),
		"53696": tests(phpunit + "tests/Database/DatabaseSchemaBlueprintTest.php"),
	},
	"php-cs-fixer/php-cs-fixer": {
		"8367": tests(phpunit + "tests/Fixer/Import/FullyQualifiedStrictTypesFixerTest.php"),
		"8331": tests(phpunit + "tests/Fixer/LanguageConstruct/NullableTypeDeclarationFixerTest.php"),
		"8075": tests(phpunit + "tests/Fixer/PhpUnit/PhpUnitAttributesFixerTest.php"),
		"8064": tests(phpunit + "tests/Fixer/StringNotation/SimpleToComplexStringVariableFixerTest.php"),
		"7998": tests(phpunit + "tests/Fixer/Casing/ConstantCaseFixerTest.php"),
		"7875": tests(phpunit + "tests/Fixer/Whitespace/StatementIndentationFixerTest.php"),
		"7635": tests(phpunit + "tests/Fixer/Import/FullyQualifiedStrictTypesFixerTest.php"),
		"7523": tests(phpunit + "tests/Fixer/Operator/BinaryOperatorSpacesFixerTest.php"),
		"8256": tests(phpunit + "tests/Fixer/PhpTag/BlankLineAfterOpeningTagFixerTest.php"),
		"7663": tests(phpunit + "tests/Fixer/Whitespace/StatementIndentationFixerTest.php"),
	},
	"briannesbitt/carbon": {
		"3103": tests(phpunit + "tests/CarbonImmutable/SettersTest.php"),
		"3098": tests(phpunit + "tests/CarbonInterval/ConstructTest.php"),
		"3073": tests(phpunit + "tests/CarbonInterval/TotalTest.php"),
		"3041": tests(phpunit + "tests/CarbonPeriod/CreateTest.php"),
		"3005": tests(phpunit + "tests/CarbonInterval/ConstructTest.php"),
		"2981": tests(phpunit + "tests/CarbonInterval/TotalTest.php"),
		// The fix adds a dependency, so it is installed again.
		"2813": buildTests([]string{"composer update", "composer install"}, phpunit+"tests/Factory/FactoryTest.php"),
		"2752": tests(phpunit + "tests/CarbonImmutable/IsTest.php"),
		"2665": tests(phpunit + "tests/Carbon/RoundTest.php"),
		"2762": tests(phpunit + "tests/CarbonInterval/RoundingTest.php"),
	},

	// Ruby
	"jekyll/jekyll": {
		"9141": tests(`bundle exec ruby -I test test/test_site.rb -v -n "/static files/"`),
		"8761": tests(`bundle exec cucumber --publish-quiet --format progress --no-color features/post_data.feature:6 features/post_data.feature:30`),
		"8047": tests(`bundle exec ruby -I test test/test_filters.rb -v -n "/where_exp filter/"`),
		"8167": tests(`bundle exec ruby -I test test/test_utils.rb -v -n "/Utils.slugify/"`),
		"8771": tests(`bundle exec cucumber --publish-quiet --format progress --no-color features/incremental_rebuild.feature:27 features/incremental_rebuild.feature:70`),
	},
	"fluent/fluentd": {
		"4598": tests(`bundle exec ruby test/plugin_helper/test_http_server_helper.rb -v -n '/mount/'`),
		"4311": tests(`bundle exec ruby test/config/test_system_config.rb -v -n '/rotate_age/'`),
		"4655": tests(`bundle exec ruby test/plugin/test_in_http.rb -v -n '/test_add/'`),
		"4030": tests(`bundle exec ruby test/plugin/out_forward/test_ack_handler.rb -v`),
		"3917": tests(`bundle exec ruby test/test_config.rb -v`),
		"3640": tests(`bundle exec ruby test/plugin_helper/test_retry_state.rb -v -n '/exponential backoff/'`),
		"3641": tests(`bundle exec ruby test/test_supervisor.rb -v`),
		"3616": tests(`bundle exec ruby test/plugin/test_in_http.rb -v -n '/test_application/'`),
		"3631": tests(`bundle exec ruby test/test_event_router.rb -v -n '/handle_emits_error/'`),
		"3466": tests(`bundle exec ruby test/plugin/test_in_tail.rb -v -n '/test_should_replace_target_info/'`),
		"3328": tests(`bundle exec ruby test/plugin/test_in_tail.rb -v -n '/test_ENOENT_error_after_setup_watcher/'`),
		"3608": tests(`bundle exec ruby test/plugin/test_output_as_buffered_retries.rb -v -n '/retry_max_times/'`),
	},
	"fastlane/fastlane": {
		"21857": fastlaneSpec("./fastlane/spec/lane_manager_base_spec.rb"),
		"20958": fastlaneSpec("./fastlane/spec/actions_specs/import_from_git_spec.rb"),
		"20642": fastlaneSpec("./frameit/spec/device_spec.rb"),
		"19765": fastlaneSpec("./fastlane/spec/actions_specs/download_dsyms_spec.rb"),
		"20975": fastlaneSpec("./match/spec/storage/s3_storage_spec.rb"),
		"19304": fastlaneSpec("./fastlane/spec/actions_specs/zip_spec.rb"),
		"19207": fastlaneSpec("./fastlane/spec/actions_specs/zip_spec.rb"),
	},
	"jordansissel/fpm": {
		"1850": tests(`bundle exec rspec spec/fpm/package/empty_spec.rb --no-color --format json | ` + fpmRSpecToLines),
		"1829": tests(`bundle exec rspec spec/fpm/package/deb_spec.rb --no-color --format json | ` + fpmRSpecToLines),
	},
	"faker-ruby/faker": {
		"2970": tests(`bundle exec ruby test/faker/default/test_faker_internet.rb -v -n '/email/'`),
		"2705": tests(`bundle exec ruby test/faker/default/test_faker_internet.rb -v -n '/password/'`),
	},
	"rubocop/rubocop": {
		"13705": rubocopSpec("cop/lint/out_of_range_regexp_ref_spec.rb"),
		"13687": rubocopSpec("cop/lint/safe_navigation_chain_spec.rb"),
		"13680": rubocopSpec("cop/style/redundant_line_continuation_spec.rb"),
		"13668": rubocopSpec("cop/style/sole_nested_conditional_spec.rb"),
		"13627": rubocopSpec("cop/style/multiple_comparison_spec.rb"),
		"13653": rubocopSpec("cop/style/access_modifier_declarations_spec.rb"),
		"13579": rubocopSpec("cop/layout/line_continuation_spacing_spec.rb"),
		"13560": rubocopSpec("cop/style/file_null_spec.rb"),
		"13503": rubocopSpec("cop/style/dig_chain_spec.rb"),
		"13479": rubocopSpec("cop/layout/leading_comment_space_spec.rb"),
		"13431": rubocopSpec("cop/layout/empty_lines_around_method_body_spec.rb"),
		"13424": rubocopSpec("cop/style/safe_navigation_spec.rb"),
		"13393": rubocopSpec("cop/style/guard_clause_spec.rb"),
		"13396": rubocopSpec("cop/style/redundant_parentheses_spec.rb"),
		"13375": rubocopSpec("cli_spec.rb"),
		"13362": rubocopSpec("cop/style/redundant_freeze_spec.rb"),
	},

	// C and C++
	"redis/redis": {
		"13115": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/scripting`),
		"12472": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/acl --only "/.*ACL GETUSER.*"`),
		"12272": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/type/string --only "/.*(GETRANGE|SETRANGE).*"`),
		"11734": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/bitops`),
		"10764": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/type/zset --only "BZMPOP"`),
		"10095": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/type/list --only "/.*(LPOP|RPOP)"`),
		"9733":  buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/introspection-2`),
		"10068": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/type/stream --only "/*XTRIM*"`),
		"11631": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/geo --only "/.*GEOSEARCH .*"`),
		"11510": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/introspection --only "/.*MONITOR.*"`),
		"11279": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/acl`),
		"13338": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/type/stream-cgroups`),
	},
	"valkey-io/valkey": {
		"928":  buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/cluster/replica-migration --only "/.*NOREPLICAS.*"`),
		"790":  buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/cluster/cluster-shards`),
		"1499": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/introspection-2`),
		"1842": buildTests(makeDistclean, `TERM=dumb ./runtest --durable --single unit/acl --only "/.*ACL LOAD.*"`),
	},
	// The build regenerates the parser and lexer (touch) so that a fix to
	// their sources takes effect.
	"jqlang/jq": forVersions(buildTests([]string{
		"git submodule update --init",
		"autoreconf -fi",
		"./configure --with-oniguruma=builtin",
		"make clean",
		"touch src/parser.y src/lexer.l",
		"make -j$(nproc)",
	}, "make check"), "2839", "2650", "2235", "2658", "2750", "2681", "2919", "2598", "2728"),
	"nlohmann/json": {
		"4237": buildTests([]string{"mkdir -p build", "cd build", "cmake ..", "make test-udt_cpp11", "cd .."},
			"./build/tests/test-udt_cpp11 -s -r=xml"),
	},
	"micropython/micropython": {
		"15898": buildTests(micropythonBuild("tests/ports/unix/"), micropythonTests("-i string_format")...),
		"13569": buildTests(micropythonBuild("tests/ports/unix/"), micropythonTests("-i try")...),
		"13039": buildTests(micropythonBuild("tests/unix/"), micropythonTests("-i slice")...),
		"12158": buildTests(micropythonBuild("tests/unix/"), micropythonTests("-d thread")...),
		"10095": buildTests(micropythonBuild(""), micropythonTests("-i basics/fun")...),
	},
	"fmtlib/fmt": mergeVersions(
		forVersions(fmtTarget("ranges-test"), "3863", "3158", "2457"),
		forVersions(fmtTarget("format-test"), "3901", "3750", "3248", "2317", "2310"),
		forVersions(fmtTarget("xchar-test"), "3272"),
		forVersions(fmtTarget("std-test"), "3729"),
		forVersions(fmtTarget("printf-test"), "1683"),
	),
}

// Shared pieces of the official commands.
const (
	batTests    = "RUSTFLAGS=-Awarnings cargo test --package bat --test integration_tests "
	axumLib     = "RUSTFLAGS=-Awarnings cargo test --package axum --lib "
	xvfb        = `xvfb-run --server-args="-screen 0 1280x1024x24 -ac :99"`
	chartKarma  = "./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start "
	preactKarma = `COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep="`
	gradleTests = "./gradlew test --tests "
	phpunit     = "vendor/bin/phpunit --testdox --colors=never "

	chartKarmaFlags = " --single-run --coverage --grep --auto-watch false"

	// jestJSONToLines turns Jest's JSON report into one "[STATUS] title"
	// line per test.
	jestJSONToLines = `jq -r '.testResults[].assertionResults[] | "[" + (.status | ascii_upcase) + "] " + ((.ancestorTitles | join(" > ")) + (if .ancestorTitles | length > 0 then " > " else "" end) + .title)'`
	// The RSpec transforms turn RSpec's JSON report (after any text before
	// it) into one line per example.
	fastlaneRSpecToLines = `sed -n '/^{/,$p' | jq -r '.examples[] | "\(.description) - \(.id) - \(.status)"'`
	fpmRSpecToLines      = `sed -n '/^{/,$p' | jq -r '.examples[] | "\(.description) - \(.status)"'`
	// RuboCop runs each example several times: one line per description,
	// failed when any run failed.
	rubocopRSpecToLines = `sed -n '/^{/,$p' | \
  jq -r '.examples | group_by(.description) | .[] |
    if any(select(.status == "failed")) then
      (.[0] | "\(.description) - failed")
    else
      (.[0] | "\(.description) - \(.status)")
    end'`
)

var (
	cargoBuild    = []string{"cargo build"}
	makeBuild     = []string{"make build"}
	npmBuild      = []string{"npm run build"}
	makeDistclean = []string{"make distclean", "make"}
)

// mvnd runs each test ("Class#method") in its own Maven daemon call.
func mvnd(module string, names ...string) []string {
	return prefixed("mvnd test -B -pl "+module+" -Dtest=", names...)
}

func fastlaneSpec(spec string) commonSpec {
	return tests("mkdir -p /testbed/tmp",
		"TMPDIR=/testbed/tmp FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec "+spec+" --no-color --format json | "+fastlaneRSpecToLines)
}

func rubocopSpec(spec string) commonSpec {
	return tests("bundle exec rspec spec/rubocop/" + spec + " --no-color --format json | " + rubocopRSpecToLines)
}

// micropythonBuild builds the unix port and, where ffiDir is set, the FFI
// test library that its tests load.
func micropythonBuild(ffiDir string) []string {
	b := []string{"source ./tools/ci.sh", "ci_unix_build_helper VARIANT=standard"}
	if ffiDir != "" {
		b = append(b, "gcc -shared -o "+ffiDir+"ffi_lib.so "+ffiDir+"ffi_lib.c")
	}
	return b
}

func micropythonTests(selection string) []string {
	return []string{
		"cd tests",
		"MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py " + selection,
	}
}

func fmtTarget(target string) commonSpec {
	return buildTests([]string{
		"mkdir -p build",
		"cmake -B build -S .",
		"cmake --build build --parallel $(nproc) --target " + target,
	}, "ctest --test-dir build -V -R "+target)
}
