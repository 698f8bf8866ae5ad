package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/logparse"
)

// multilingualInst is an instance of repo at version with the official
// instance id ("owner__name-version") and a test patch that modifies one
// file.
func multilingualInst(repo, version string) dataset.Instance {
	return dataset.Instance{
		InstanceID: strings.Replace(repo, "/", "__", 1) + "-" + version,
		Repo:       repo,
		Version:    version,
		BaseCommit: base,
		TestPatch:  "diff --git a/x_test.go b/x_test.go\n--- a/x_test.go\n+++ b/x_test.go\n@@ -1 +1 @@\n-a\n+b\n",
	}
}

func TestMultilingualSpecs(t *testing.T) {
	type testCase struct {
		name, repo, version string
		testCmd             string
		build               []string
		parser              string
	}
	tests := []testCase{
		{name: "go", repo: "caddyserver/caddy", version: "6411",
			testCmd: `go test -v . -run "TestReplacerNew*"`, parser: "gotest"},
		{name: "go test before -v", repo: "gin-gonic/gin", version: "4003",
			testCmd: `go test . -v -run "TestMethodNotAllowedNoRoute"`, parser: "gotest"},
		{name: "rust with build", repo: "nushell/nushell", version: "13246",
			testCmd: `cargo test -p nu-command --no-fail-fast --test main find::`,
			build:   []string{"cargo build"}, parser: "cargo"},
		{name: "rust quoted env", repo: "tokio-rs/tokio", version: "4898",
			testCmd: `RUST_BACKTRACE=1 RUSTFLAGS="-Awarnings --cfg tokio_unstable" cargo test --features full --test rt_metrics`,
			parser:  "cargo"},
		{name: "js with build", repo: "babel/babel", version: "13928",
			testCmd: `yarn jest babel-parser -t "arrow" --verbose`, build: []string{"make build"}, parser: "jest"},
		{name: "js parser by pull request", repo: "immutable-js/immutable-js", version: "2005",
			testCmd: `npx jest __tests__/OrderedMap.ts __tests__/OrderedSet.ts --silent --json | jq -r '.testResults[].assertionResults[] | "[" + (.status | ascii_upcase) + "] " + ((.ancestorTitles | join(" > ")) + (if .ancestorTitles | length > 0 then " > " else "" end) + .title)'`,
			build:   []string{"npm run build"}, parser: "jest_json"},
		{name: "js release line, several commands", repo: "chartjs/Chart.js", version: "3.4",
			testCmd: "npm install\nnpm run build\n" +
				`xvfb-run --server-args="-screen 0 1280x1024x24 -ac :99" su chromeuser -c "./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.js --single-run --coverage --grep --auto-watch false"`,
			parser: "chart_js"},
		{name: "js command holding a newline", repo: "processing/p5.js", version: "0.10",
			testCmd: "sed -i 's/concurrency:[[:space:]]*[0-9][0-9]*/concurrency: 1/g' Gruntfile.js\nstdbuf -o 1M ./node_modules/.bin/grunt test --quiet --force",
			parser:  "p5js"},
		{name: "java several commands", repo: "google/gson", version: "2479",
			testCmd: "mvnd test -B -pl gson -Dtest=com.google.gson.GsonBuilderTest#testRegisterTypeAdapterForObjectAndJsonElements\n" +
				"mvnd test -B -pl gson -Dtest=com.google.gson.GsonBuilderTest#testRegisterTypeHierarchyAdapterJsonElements\n" +
				"mvnd test -B -pl gson -Dtest=com.google.gson.GsonBuilderTest#testModificationAfterCreate",
			parser: "maven"},
		{name: "java with build", repo: "projectlombok/lombok", version: "3602",
			testCmd: "ant test.instance", build: []string{"ant test.compile"}, parser: "ant"},
		{name: "java gradle", repo: "apache/lucene", version: "13170",
			testCmd: "./gradlew test --tests org.apache.lucene.analysis.opennlp.TestOpenNLPSentenceBreakIterator -Ptests.useSecurityManager=false",
			parser:  "gradle_custom"},
		{name: "php", repo: "phpoffice/phpspreadsheet", version: "4313",
			testCmd: "./vendor/bin/phpunit --testdox --colors=never tests/PhpSpreadsheetTests/Reader/Ods/FormulaTranslatorTest.php",
			parser:  "phpunit"},
		{name: "php with build", repo: "briannesbitt/carbon", version: "2813",
			testCmd: "vendor/bin/phpunit --testdox --colors=never tests/Factory/FactoryTest.php",
			build:   []string{"composer update", "composer install"}, parser: "phpunit"},
		{name: "ruby parser by pull request", repo: "jekyll/jekyll", version: "8761",
			testCmd: "bundle exec cucumber --publish-quiet --format progress --no-color features/post_data.feature:6 features/post_data.feature:30",
			parser:  "cucumber"},
		{name: "ruby several commands", repo: "fastlane/fastlane", version: "20642",
			testCmd: "mkdir -p /testbed/tmp\n" +
				`TMPDIR=/testbed/tmp FASTLANE_SKIP_UPDATE_CHECK=1 bundle exec rspec ./frameit/spec/device_spec.rb --no-color --format json | sed -n '/^{/,$p' | jq -r '.examples[] | "\(.description) - \(.id) - \(.status)"'`,
			parser: "rspec_transformed_json"},
		{name: "ruby multi-line transform", repo: "rubocop/rubocop", version: "13375",
			testCmd: "bundle exec rspec spec/rubocop/cli_spec.rb --no-color --format json | sed -n '/^{/,$p' | \\\n" +
				"  jq -r '.examples | group_by(.description) | .[] |\n" +
				"    if any(select(.status == \"failed\")) then\n" +
				"      (.[0] | \"\\(.description) - failed\")\n" +
				"    else\n" +
				"      (.[0] | \"\\(.description) - \\(.status)\")\n" +
				"    end'",
			parser: "rspec_transformed_json"},
		{name: "c", repo: "redis/redis", version: "12472",
			testCmd: `TERM=dumb ./runtest --durable --single unit/acl --only "/.*ACL GETUSER.*"`,
			build:   []string{"make distclean", "make"}, parser: "redis"},
		{name: "c several commands", repo: "micropython/micropython", version: "10095",
			testCmd: "cd tests\nMICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i basics/fun",
			build:   []string{"source ./tools/ci.sh", "ci_unix_build_helper VARIANT=standard"}, parser: "micropython_test"},
		{name: "c++", repo: "fmtlib/fmt", version: "3272",
			testCmd: "ctest --test-dir build -V -R xchar-test",
			build:   []string{"mkdir -p build", "cmake -B build -S .", "cmake --build build --parallel $(nproc) --target xchar-test"},
			parser:  "googletest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := For(multilingualInst(tc.repo, tc.version))
			require.NoError(t, err)
			assert.Equal(t, tc.testCmd, s.TestCmd)
			assert.Equal(t, tc.testCmd, s.TestCommand(), "no directives appended")
			assert.Empty(t, s.Directives)
			assert.Equal(t, tc.build, s.Build)
			assert.Equal(t, ScriptCommon, s.Script)
			assert.Equal(t, tc.parser, s.Parser)
			assert.Equal(t, SourceOfficial, s.Source)
			assert.Empty(t, s.Install, "install runs at image build only")
		})
	}
}

// Every entry has a test command and a parser that logparse knows.
func TestMultilingualTablesComplete(t *testing.T) {
	for repo, versions := range commonTables {
		for v := range versions {
			s, err := For(multilingualInst(repo, v))
			require.NoError(t, err, repo+" "+v)
			assert.NotEmpty(t, s.TestCmd, repo+" "+v)
			_, known := logparse.Lookup(s.Parser)
			assert.True(t, known, "%s %s: parser %q", repo, v, s.Parser)
		}
	}
}

func TestMultilingualBuildIsCopied(t *testing.T) {
	s, err := For(multilingualInst("redis/redis", "11734"))
	require.NoError(t, err)
	s.Build[0] = "changed"
	again, err := For(multilingualInst("redis/redis", "13115"))
	require.NoError(t, err)
	assert.Equal(t, []string{"make distclean", "make"}, again.Build)
}

// commonHeader opens every official common eval script: the shell header,
// then cd, safe.directory for a non-root user, cd again.
var commonHeader = []string{
	"#!/bin/bash",
	"set -uxo pipefail",
	"cd /testbed",
	"git config --global --add safe.directory /testbed",
	"cd /testbed",
}

func TestMultilingualEvalScript(t *testing.T) {
	const goPatch = "diff --git a/replacer_test.go b/replacer_test.go\n--- a/replacer_test.go\n+++ b/replacer_test.go\n@@ -1 +1 @@\n-a\n+b"
	const jsPatch = "diff --git a/packages/babel-generator/test/new.js b/packages/babel-generator/test/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/packages/babel-generator/test/new.js\n@@ -0,0 +1 @@\n+x"
	const chartPatch = "diff --git a/test/specs/core.test.js b/test/specs/core.test.js\n--- a/test/specs/core.test.js\n+++ b/test/specs/core.test.js\n@@ -1 +1 @@\n-a\n+b"
	type testCase struct {
		name          string
		repo, version string
		patch         string
		opts          ScriptOptions
		want          []string
	}
	tests := []testCase{
		{
			name: "go, as upstream writes it", repo: "caddyserver/caddy", version: "6411", patch: goPatch,
			opts: ScriptOptions{NoExitCode: true},
			want: concat(commonHeader, []string{
				"git checkout " + base + " replacer_test.go",
				"git apply --verbose --reject - <<'EOF_114329324912'\n" + goPatch + "\nEOF_114329324912",
				": '>>>>> Start Test Output'",
				`go test -v . -run "TestReplacerNew*"`,
				": '>>>>> End Test Output'",
				"git checkout " + base + " replacer_test.go",
			}),
		},
		{
			name: "js with build, new test file only, exit code recorded", repo: "babel/babel", version: "14532", patch: jsPatch,
			want: concat(commonHeader, []string{
				`echo "No test files to reset"`,
				"git apply --verbose --reject - <<'EOF_114329324912'\n" + jsPatch + "\nEOF_114329324912",
				"make build",
				": '>>>>> Start Test Output'",
				"yarn jest babel-generator --verbose",
				"SWEBENCH_TEST_EXIT_CODE=$?",
				": '>>>>> End Test Output'",
				`echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"`,
				`echo "No test files to reset"`,
			}),
		},
		{
			name: "js, several test commands one per line", repo: "chartjs/Chart.js", version: "4.2", patch: chartPatch,
			opts: ScriptOptions{NoExitCode: true},
			want: concat(commonHeader, []string{
				"git checkout " + base + " test/specs/core.test.js",
				"git apply --verbose --reject - <<'EOF_114329324912'\n" + chartPatch + "\nEOF_114329324912",
				": '>>>>> Start Test Output'",
				"pnpm install",
				"pnpm run build",
				`xvfb-run --server-args="-screen 0 1280x1024x24 -ac :99" su chromeuser -c "./node_modules/.bin/cross-env NODE_ENV=test ./node_modules/.bin/karma start ./karma.conf.cjs --single-run --coverage --grep --auto-watch false"`,
				": '>>>>> End Test Output'",
				"git checkout " + base + " test/specs/core.test.js",
			}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := multilingualInst(tc.repo, tc.version)
			in.TestPatch = tc.patch
			s, err := For(in)
			require.NoError(t, err)
			assert.Equal(t, strings.Join(tc.want, "\n")+"\n", s.EvalScript(tc.opts))
		})
	}
}

func TestMultilingualOverrideBeatsTable(t *testing.T) {
	path := writeTemp(t, t.TempDir(), "ov.json", `{
  "caddyserver/caddy": {"parser": "gotest"},
  "caddyserver/caddy:6411": {"test_cmd": "go test -v ./...", "build": ["go mod download"]},
  "redis/redis:12472": {"directives": "files", "script": "python"}
}`)
	ov, err := LoadOverrides(path)
	require.NoError(t, err)

	s, err := For(multilingualInst("caddyserver/caddy", "6411"), WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, "go test -v ./...", s.TestCmd)
	assert.Equal(t, []string{"go mod download"}, s.Build)
	assert.Equal(t, SourceOverride, s.Source)
	assert.Equal(t, ScriptCommon, s.Script)

	// Another version keeps the table's command.
	s, err = For(multilingualInst("caddyserver/caddy", "6345"), WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, "go test -v ./caddytest/integration", s.TestCmd)
	assert.Empty(t, s.Build)

	s, err = For(multilingualInst("redis/redis", "12472"), WithOverrides(ov))
	require.NoError(t, err)
	assert.Equal(t, ScriptPython, s.Script)
	assert.Equal(t, []string{"x_test.go"}, s.Directives)
	assert.Equal(t, []string{"make distclean", "make"}, s.Build)
}

func TestMultilingualMissingVersion(t *testing.T) {
	t.Run("pull request numbers: error naming repository and version", func(t *testing.T) {
		_, err := For(multilingualInst("caddyserver/caddy", "9999"))
		require.ErrorIs(t, err, ErrUnknownVersion)
		assert.Contains(t, err.Error(), "caddyserver/caddy")
		assert.Contains(t, err.Error(), `"9999"`)
	})
	t.Run("override test_cmd supplies it", func(t *testing.T) {
		path := writeTemp(t, t.TempDir(), "ov.json", `{"caddyserver/caddy:9999": {"test_cmd": "go test ./..."}}`)
		ov, err := LoadOverrides(path)
		require.NoError(t, err)
		s, err := For(multilingualInst("caddyserver/caddy", "9999"), WithOverrides(ov))
		require.NoError(t, err)
		assert.Equal(t, "go test ./...", s.TestCmd)
		assert.Equal(t, ScriptCommon, s.Script)
	})
	t.Run("override parser alone does not", func(t *testing.T) {
		path := writeTemp(t, t.TempDir(), "ov.json", `{"caddyserver/caddy": {"parser": "gotest"}}`)
		ov, err := LoadOverrides(path)
		require.NoError(t, err)
		_, err = For(multilingualInst("caddyserver/caddy", "9999"), WithOverrides(ov))
		assert.ErrorIs(t, err, ErrUnknownVersion)
	})
	t.Run("row's own eval_script", func(t *testing.T) {
		in := multilingualInst("caddyserver/caddy", "9999")
		in.EvalScript = "#!/bin/bash\ngo test ./...\n"
		s, err := For(in)
		require.NoError(t, err)
		assert.Equal(t, SourceInstance, s.Source)
	})
	t.Run("release line: latest version stands in", func(t *testing.T) {
		s, err := For(multilingualInst("markedjs/marked", "9.9"))
		require.NoError(t, err)
		assert.Equal(t, SourceRepoFallback, s.Source)
		assert.Equal(t, "./node_modules/.bin/jasmine --no-color --config=jasmine.json", s.TestCmd)
		require.Len(t, s.Notes, 1)
		assert.Contains(t, s.Notes[0], "5.0")
	})
	t.Run("one-entry table: its entry stands in", func(t *testing.T) {
		s, err := For(multilingualInst("nlohmann/json", "4000"))
		require.NoError(t, err)
		assert.Equal(t, SourceRepoFallback, s.Source)
		assert.Equal(t, "./build/tests/test-udt_cpp11 -s -r=xml", s.TestCmd)
		assert.Equal(t, "doctest", s.Parser)
	})
}
