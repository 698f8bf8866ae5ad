package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-rebench (Nebius): Python rows that carry their own recipe,
// install_config (python, pre_install, install, test_cmd, log_parser,
// eval_commands, ...), which its fork of the harness
// (SWE-rebench/SWE-bench-fork, SWE-bench 4.0.3 underneath) uses instead of
// the official tables, even for a repository the tables know. Prebuilt
// images are swerebench/sweb.eval.x86_64.<id>, named as the official ones;
// grading is the official rule with the parser the row names.
func init() {
	Register(&Family{
		Name:    "swe-rebench",
		Aliases: []string{"rebench"},
		Title:   "SWE-rebench",
		Datasets: []Dataset{
			{ID: "nebius/SWE-rebench", Splits: []string{"test"}},
			// The leaderboard publishes one split a month, "YYYY_MM".
			{ID: "nebius/SWE-rebench-leaderboard", Splits: RebenchLeaderboardSplits},
		},
		Upstream:  Upstream{Repository: "SWE-rebench/SWE-bench-fork", Commit: "39316f79cd51c144fb0c62c157ef4739e7653577"},
		Namespace: "swerebench",
		Claim: func(inst dataset.Instance) Claim {
			if raw, ok := inst.Extra["install_config"]; ok && string(raw) != "null" {
				return ClaimRow
			}
			return ClaimNone
		},
		Spec: rebenchSpec,
		// The fork is SWE-bench 4.0.3: v4's reading of the log and its
		// grading (v5's would resolve a row whose lists are empty or
		// whose PASS_TO_PASS test was skipped differently).
		Rules: harness.V4,
	})
}

// RebenchLeaderboardSplits are the monthly splits of
// nebius/SWE-rebench-leaderboard published by 2026-03; a later month's
// split is read by its name as any other.
var RebenchLeaderboardSplits = []string{
	"2025_01", "2025_02", "2025_03", "2025_04", "2025_05", "2025_06", "2025_07", "2025_08",
	"2025_09", "2025_10", "2025_11", "2025_12", "2026_01", "2026_02", "2026_03",
}

// ErrRowConfig is a row whose install_config the family's harness cannot
// run (a missing test command, an unknown log parser, a repository its
// fork runs with a non-Python script): the fork raises, swebox refuses.
var ErrRowConfig = errors.New("the row's install_config cannot be run as its harness runs it")

// rebenchConfig is a row's install_config after the fork's load-time
// clean-up (utils.py _clean_install_config): keys whose value is None
// dropped, the Python version raised to 3.6 at least, LANG and LC_ALL set
// on the install and test commands.
type rebenchConfig struct {
	testCmd, install, logParser, python string
	hasInstall                          bool
	preInstall, evalCommands            []string
}

// rebenchLocale is what _clean_install_config puts before the install and
// test commands.
const rebenchLocale = "LANG=C.UTF-8 LC_ALL=C.UTF-8 "

func parseRebenchConfig(raw json.RawMessage) (rebenchConfig, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		// The Hub's Parquet form may hold the object as a string.
		var s string
		if json.Unmarshal(raw, &s) != nil || json.Unmarshal([]byte(s), &fields) != nil {
			return rebenchConfig{}, fmt.Errorf("%w: install_config is %s, not an object", ErrRowConfig, dataset.JSONKind(raw))
		}
	}
	for k, v := range fields {
		if string(v) == "null" {
			delete(fields, k)
		}
	}
	str := func(key string) (string, bool, error) {
		v, ok := fields[key]
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", true, fmt.Errorf("%w: install_config.%s is %s, not a string", ErrRowConfig, key, dataset.JSONKind(v))
		}
		return s, true, nil
	}
	list := func(key string) ([]string, error) {
		v, ok := fields[key]
		if !ok {
			return nil, nil
		}
		var l []string
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, fmt.Errorf("%w: install_config.%s is %s, not a list of strings", ErrRowConfig, key, dataset.JSONKind(v))
		}
		return l, nil
	}
	var c rebenchConfig
	var err error
	var ok bool
	if c.testCmd, ok, err = str("test_cmd"); err != nil {
		return c, err
	} else if !ok {
		return c, fmt.Errorf("%w: install_config has no test_cmd", ErrRowConfig)
	}
	c.testCmd = rebenchLocale + c.testCmd
	if c.install, c.hasInstall, err = str("install"); err != nil {
		return c, err
	} else if c.hasInstall {
		c.install = rebenchLocale + c.install
	}
	if c.logParser, ok, err = str("log_parser"); err != nil {
		return c, err
	} else if !ok {
		return c, fmt.Errorf("%w: install_config has no log_parser", ErrRowConfig)
	}
	if c.preInstall, err = list("pre_install"); err != nil {
		return c, err
	}
	if c.evalCommands, err = list("eval_commands"); err != nil {
		return c, err
	}
	if v, ok := fields["python"]; ok {
		// A number or a string; conda knows nothing older than 3.6
		// (fix_python_version).
		c.python = strings.Trim(string(v), `"`)
		if pyOlder(c.python, "3.6") {
			c.python = "3.6"
		}
	}
	return c, nil
}

// pyOlder compares dotted versions numerically (packaging's parse on the
// plain versions install_config holds).
func pyOlder(v, than string) bool {
	a, b := strings.Split(v, "."), strings.Split(than, ".")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			fmt.Sscanf(a[i], "%d", &x)
		}
		if i < len(b) {
			fmt.Sscanf(b[i], "%d", &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// rebenchParser is the swebox parser for install_config.log_parser, a key
// of the fork's MAP_REPO_TO_PARSER: one of its three parse_log_pytest*
// names, or a repository of the official tables.
func rebenchParser(name, instanceID string) (string, error) {
	switch name {
	case "parse_log_pytest":
		return harness.ParserPytest, nil
	case "parse_log_pytest_options":
		return harness.ParserPytestOptions, nil
	case "parse_log_pytest_v2":
		return harness.ParserPytestV2, nil
	}
	if spec.TableOf(name) != spec.TableNone && harness.ParserForRepo(name) != harness.DefaultParser {
		return harness.ParserForInstance(name, instanceID), nil
	}
	return "", fmt.Errorf("%w: log_parser %q is no parser of the fork's MAP_REPO_TO_PARSER", ErrRowConfig, name)
}

// rebenchSpec is the fork's make_test_spec for a row with install_config:
// the official Python eval script with the row's test command, install
// step and eval_commands, and directives from the test patch's changed
// files that still exist after it (unidiff, deleted files left out).
func rebenchSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	c, err := parseRebenchConfig(inst.Extra["install_config"])
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	if t := spec.TableOf(inst.Repo); t != spec.TableNone && t != spec.TablePython {
		// MAP_REPO_TO_EXT sends these to the fork's non-Python scripts.
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: %s runs with the fork's %s script", inst.InstanceID, ErrRowConfig, inst.Repo, t)
	}
	parser, err := rebenchParser(c.logParser, inst.InstanceID)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	ts, err := spec.For(inst, opts...)
	if err != nil {
		return ts, err
	}
	ts.TestCmd, ts.Parser, ts.Python = c.testCmd, parser, c.python
	ts.Install = ""
	if c.hasInstall {
		ts.Install = c.install
	}
	ts.PreInstall, ts.EvalCommands = c.preInstall, c.evalCommands
	ts.NanoCPUs = 0
	ts.Directives = rebenchDirectives(inst)
	ts.Source = spec.SourceRow
	ts.Notes = append(ts.Notes[:0:0], "test command, install step and log parser from the row's install_config")
	return ts, nil
}

// rebenchDirectives is the fork's get_test_directives.
func rebenchDirectives(inst dataset.Instance) []string {
	switch inst.Repo {
	case "swe-bench/humaneval", "swe-bench/humanevalfix-python":
		return []string{"test.py"}
	case "swe-bench/humanevalfix-go", "swe-bench/humanevalfix-java":
		return nil
	case "swe-bench/humanevalfix-js":
		return []string{"test.js"}
	case "nebius/nebo":
		return []string{""}
	}
	var out []string
	for _, d := range changedFiles(inst.TestPatch) {
		if len(spec.Directives("diff --git a/"+d+" b/"+d, spec.DirectivesFiles)) == 0 {
			continue // a non-test extension
		}
		if inst.Repo == "django/django" {
			d = strings.TrimPrefix(strings.TrimSuffix(d, ".py"), "tests/")
			d = strings.ReplaceAll(d, "/", ".")
		}
		out = append(out, d)
	}
	return out
}

// changedFiles is the fork's get_changed_files: each file of the patch
// that is not deleted, by unidiff's PatchedFile.path (the source name
// without "a/", or for a new or renamed file the target without "b/").
func changedFiles(patch string) []string {
	var out []string
	var src, dst string
	rename, in := false, false
	flush := func() {
		if !in || dst == "/dev/null" {
			return
		}
		p := src
		if src == "/dev/null" || src == "" || rename {
			p = dst
		}
		p = strings.TrimPrefix(strings.TrimPrefix(p, "a/"), "b/")
		out = append(out, p)
	}
	header := false
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			in, header, rename = true, true, false
			rest := strings.TrimPrefix(line, "diff --git ")
			src, dst = rest, rest
			if i := strings.LastIndex(rest, " b/"); i >= 0 {
				src, dst = rest[:i], rest[i+1:]
			}
		case !header:
		case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "rename to "):
			rename = true
		case strings.HasPrefix(line, "--- "):
			src = strings.SplitN(line[len("--- "):], "\t", 2)[0]
		case strings.HasPrefix(line, "+++ "):
			dst = strings.SplitN(line[len("+++ "):], "\t", 2)[0]
		case strings.HasPrefix(line, "@@ "):
			header = false
		}
	}
	flush()
	return out
}
