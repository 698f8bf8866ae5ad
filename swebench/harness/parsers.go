package harness

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Log parser names: the official parse_log_<name> functions, without the
// prefix. swebench/logparse registers a parser under each.
const (
	// Python (swebench/harness/log_parsers/python.py)
	ParserPytest        = "pytest"
	ParserPytestOptions = "pytest_options"
	ParserPytestV2      = "pytest_v2"
	ParserDjango        = "django"
	ParserSympy         = "sympy"
	ParserSeaborn       = "seaborn"
	ParserMatplotlib    = "matplotlib"
	// Go, Rust, Java
	ParserGotest       = "gotest"
	ParserCargo        = "cargo"
	ParserMaven        = "maven"
	ParserAnt          = "ant"
	ParserGradleCustom = "gradle_custom"
	// JavaScript
	ParserJest     = "jest"
	ParserJestJSON = "jest_json"
	ParserVitest   = "vitest"
	ParserKarma    = "karma"
	ParserTap      = "tap"
	ParserMarked   = "marked"
	ParserChartJS  = "chart_js"
	ParserReactPDF = "react_pdf"
	ParserCalypso  = "calypso"
	ParserP5js     = "p5js"
	// C and C++
	ParserRedis       = "redis"
	ParserJq          = "jq"
	ParserDoctest     = "doctest"
	ParserMicropython = "micropython_test"
	ParserGoogletest  = "googletest"
	// PHP
	ParserPhpunit = "phpunit"
	// Ruby
	ParserMinitest             = "minitest"
	ParserCucumber             = "cucumber"
	ParserRubyUnit             = "ruby_unit"
	ParserRspecTransformedJSON = "rspec_transformed_json"
	// JavaScript repositories added in 5.0.2 (SWE-bench Multimodal)
	ParserHighlightjs     = "highlightjs"
	ParserPrismjs         = "prismjs"
	ParserEslint          = "eslint"
	ParserBpmnJS          = "bpmn_js"
	ParserOpenlayers      = "openlayers"
	ParserEmotion         = "emotion"
	ParserGrommet         = "grommet"
	ParserNextV1          = "next_v1"
	ParserNextV2          = "next_v2"
	ParserCypress         = "cypress"
	ParserCarbon          = "carbon"
	ParserLighthouseMocha = "lighthouse_mocha"
	ParserQuartoCli       = "quarto_cli"
	// ParserPlotlyJS is parse_plotly_js, the one official parser without
	// the parse_log_ prefix. 5.0.2 maps plotly/plotly.js to it in
	// MAP_REPO_TO_PARSER_JS but leaves it out of PARSER_REGISTRY.
	ParserPlotlyJS = "plotly_js"
	// The official parsers that only choose another (see [ChosenParser]).
	ParserImmutableJS = "immutable_js"
	ParserJekyll      = "jekyll"
	ParserNext        = "next"
	ParserLighthouse  = "lighthouse"
	// ParserLighthouseJSON names the branch of parse_log_lighthouse for
	// versions before 3 (Mocha's JSON reporter), which has no official name
	// of its own and is not accepted as a parser name.
	ParserLighthouseJSON = "lighthouse (mocha json)"

	// DefaultParser is the parser of a repository that is in no table.
	DefaultParser = ParserPytest
)

// repoParsers is MAP_REPO_TO_PARSER, with parser names instead of functions.
var repoParsers = map[string]string{
	// Python
	"astropy/astropy":              ParserPytestV2,
	"django/django":                ParserDjango,
	"marshmallow-code/marshmallow": ParserPytest,
	"matplotlib/matplotlib":        ParserMatplotlib,
	"mwaskom/seaborn":              ParserSeaborn,
	"pallets/flask":                ParserPytest,
	"psf/requests":                 ParserPytestOptions,
	"pvlib/pvlib-python":           ParserPytest,
	"pydata/xarray":                ParserPytest,
	"pydicom/pydicom":              ParserPytestOptions,
	"pylint-dev/astroid":           ParserPytest,
	"pylint-dev/pylint":            ParserPytestOptions,
	"pytest-dev/pytest":            ParserPytest,
	"pyvista/pyvista":              ParserPytest,
	"scikit-learn/scikit-learn":    ParserPytestV2,
	"sqlfluff/sqlfluff":            ParserPytest,
	"sphinx-doc/sphinx":            ParserPytestV2,
	"sympy/sympy":                  ParserSympy,
	// Go
	"caddyserver/caddy":      ParserGotest,
	"hashicorp/terraform":    ParserGotest,
	"prometheus/prometheus":  ParserGotest,
	"gohugoio/hugo":          ParserGotest,
	"gin-gonic/gin":          ParserGotest,
	"flipt-io/flipt":         ParserGotest,
	"future-architect/vuls":  ParserGotest,
	"gravitational/teleport": ParserGotest,
	"navidrome/navidrome":    ParserGotest,
	// Rust
	"burntsushi/ripgrep": ParserCargo,
	"sharkdp/bat":        ParserCargo,
	"astral-sh/ruff":     ParserCargo,
	"tokio-rs/tokio":     ParserCargo,
	"uutils/coreutils":   ParserCargo,
	"nushell/nushell":    ParserCargo,
	"tokio-rs/axum":      ParserCargo,
	// Java
	"google/gson":           ParserMaven,
	"apache/druid":          ParserMaven,
	"javaparser/javaparser": ParserMaven,
	"projectlombok/lombok":  ParserAnt,
	"apache/lucene":         ParserGradleCustom,
	"reactivex/rxjava":      ParserGradleCustom,
	// JavaScript
	"Automattic/wp-calypso": ParserCalypso,
	"chartjs/Chart.js":      ParserChartJS,
	"markedjs/marked":       ParserMarked,
	"processing/p5.js":      ParserP5js,
	"diegomura/react-pdf":   ParserReactPDF,
	"babel/babel":           ParserJest,
	"vuejs/core":            ParserVitest,
	"facebook/docusaurus":   ParserJest,
	"mrdoob/three.js":       ParserTap,
	"preactjs/preact":       ParserKarma,
	"axios/axios":           ParserTap,
	// immutable-js/immutable-js depends on the instance: see ParserForInstance.
	"immutable-js/immutable-js": ParserImmutableJS,
	// C and C++
	"redis/redis":             ParserRedis,
	"valkey-io/valkey":        ParserRedis,
	"jqlang/jq":               ParserJq,
	"nlohmann/json":           ParserDoctest,
	"micropython/micropython": ParserMicropython,
	"fmtlib/fmt":              ParserGoogletest,
	// PHP
	"phpoffice/phpspreadsheet":  ParserPhpunit,
	"laravel/framework":         ParserPhpunit,
	"php-cs-fixer/php-cs-fixer": ParserPhpunit,
	"briannesbitt/carbon":       ParserPhpunit,
	// Ruby. jekyll/jekyll depends on the instance: see ParserForInstance.
	"jekyll/jekyll":     ParserJekyll,
	"fluent/fluentd":    ParserRubyUnit,
	"faker-ruby/faker":  ParserRubyUnit,
	"fastlane/fastlane": ParserRspecTransformedJSON,
	"jordansissel/fpm":  ParserRspecTransformedJSON,
	"rubocop/rubocop":   ParserRspecTransformedJSON,
}

// ParserForRepo returns the official parser name for repo ("owner/name"),
// or [DefaultParser] when the repository is in no table.
func ParserForRepo(repo string) string {
	if name, ok := repoParsers[repo]; ok {
		return name
	}
	return DefaultParser
}

// ParserForInstance is [ParserForRepo] for one instance. Two repositories
// pick their parser by pull request number: immutable-js (2005 prints
// Jest's JSON transform, 2006 verbose Jest) and jekyll (minitest for 9141,
// 8047 and 8167, cucumber for 8761 and 8771). For any other instance of
// these it returns the official dispatching parser ([ParserImmutableJS],
// [ParserJekyll]), which raises when it parses, as upstream's does.
func ParserForInstance(repo, instanceID string) string {
	name := ParserForRepo(repo)
	if name == ParserImmutableJS || name == ParserJekyll {
		if chosen, ok := ChosenParser(name, instanceID, ""); ok {
			return chosen
		}
	}
	return name
}

// ChosenParser is the parser one of the official dispatching parsers runs
// for an instance: immutable_js and jekyll choose by instance id (above),
// next by version (1.27 runs Cypress, next_v2; any other Karma, next_v1),
// lighthouse by version (9.5, 10.0 and 10.2 lighthouse_mocha; any other
// that Python's float() reads as 3 or more carbon's Jest rules; older ones
// [ParserLighthouseJSON]). ok is false where the official function raises
// (ValueError, IndexError), and for a name that dispatches nothing.
func ChosenParser(name, instanceID, version string) (string, bool) {
	switch name {
	case ParserImmutableJS:
		switch instanceID[strings.LastIndex(instanceID, "-")+1:] {
		case "2006":
			return ParserJest, true
		case "2005":
			return ParserJestJSON, true
		}
	case ParserJekyll:
		// upstream: instance_id.split("-")[1]
		parts := strings.Split(instanceID, "-")
		if len(parts) < 2 {
			return "", false
		}
		switch parts[1] {
		case "9141", "8047", "8167":
			return ParserMinitest, true
		case "8761", "8771":
			return ParserCucumber, true
		}
	case ParserNext:
		if version == "1.27" {
			return ParserNextV2, true
		}
		return ParserNextV1, true
	case ParserLighthouse:
		switch version {
		case "9.5", "10.0", "10.2":
			return ParserLighthouseMocha, true
		}
		v, ok := pyFloat(version)
		switch {
		case !ok:
			return "", false
		case v >= 3:
			return ParserCarbon, true
		}
		return ParserLighthouseJSON, true
	}
	return "", false
}

// pyFloat is Python's float(str): surrounding whitespace, a sign, decimal
// digits with single underscores between them, an exponent, inf, infinity
// and nan in any case; no hexadecimal.
func pyFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	var digits strings.Builder
	digits.WriteString(s[:len(s)-len(body)])
	for i, r := range body {
		switch {
		case r >= '0' && r <= '9', r == '.', r == 'e', r == 'E', r == '+', r == '-':
			digits.WriteRune(r)
		case r == '_':
			if i == 0 || i == len(body)-1 || !isASCIIDigit(body[i-1]) || !isASCIIDigit(body[i+1]) {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(digits.String(), 64)
	var ne *strconv.NumError
	if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange) {
		// Python reads an overflowing literal as inf, as ParseFloat does
		// while reporting ErrRange.
		return 0, false
	}
	return v, true
}

func isASCIIDigit(b byte) bool { return b >= '0' && b <= '9' }
