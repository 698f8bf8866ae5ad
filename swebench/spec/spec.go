package spec

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/logparse"
)

// Mode says how the repository reaches the container.
type Mode string

const (
	// ModePrebuilt: official instance images with the repository at
	// /testbed and a conda environment named testbed.
	ModePrebuilt Mode = "prebuilt"
	// ModeWorkspace: a checkout mounted at /testbed in an image chosen per
	// repository (ImageMap, override file or WithDefaultImage).
	ModeWorkspace Mode = "workspace"
)

// Source says where a spec's test command and parser came from.
type Source string

const (
	// SourceOfficial: the official table for this repository and version.
	SourceOfficial Source = "official"
	// SourceRepoFallback: the repository is in the official table but this
	// version is not (the official harness raises KeyError); the entry of
	// the repository's latest version was used, or for a non-Python table
	// of one entry, that entry (as upstream resolves it).
	SourceRepoFallback Source = "repo-fallback"
	// SourceDefault: the repository is in no table: "pytest -rA <test
	// files>" and the pytest parser.
	SourceDefault Source = "default"
	// SourceInstance: the dataset row carries its own eval_script (v5).
	SourceInstance Source = "instance"
	// SourceOverride: an override file set the test command or parser.
	SourceOverride Source = "override"
)

// RepoDir is where the repository lives in the container, as in the
// official images and eval scripts.
const RepoDir = "/testbed"

// Rule sets of the official harness.
const (
	RulesV4 = "v4"
	RulesV5 = "v5"
)

// TestSpec is everything needed to evaluate one instance.
type TestSpec struct {
	InstanceID string
	Repo       string
	Version    string
	BaseCommit string

	// Image to run; "" when none is known (workspace mode without an
	// image for this repository): the caller decides.
	Image string
	// TestCmd is the test command without directives; TestCommand joins
	// them. Where the official spec lists several test commands (non-Python
	// repositories) they are joined with newlines: one line each in eval.sh.
	TestCmd    string
	Directives []string
	// Parser names the log parser (swebench/logparse); "" for humaneval,
	// which has no official parser.
	Parser string
	// EvalType is dataset.EvalTypePassAndFail or dataset.EvalTypeFailOnly.
	EvalType string

	EvalCommands []string // run before the informational git commands (Django locale setup)
	Install      string   // run again in eval.sh, e.g. "python -m pip install -e ."
	PreInstall   []string // image-build steps (not part of eval.sh)
	Python       string   // the official environment's Python version
	NanoCPUs     int64    // official CPU limit for the container, 0 = none
	// Conda adds the official "source /opt/miniconda3/bin/activate; conda
	// activate testbed" lines to eval.sh (official images have conda; the
	// project's Debian images do not).
	Conda bool

	TestPatch string
	// TestFiles are the test patch's pre-existing files, reset to
	// BaseCommit before and after the tests.
	TestFiles []string
	// DatasetScript is the row's own eval_script (v5 datasets); when set,
	// EvalScript uses it instead of generating one.
	DatasetScript string
	// Script is the shape of the generated eval.sh: ScriptPython (the
	// default) or ScriptCommon (the official non-Python form).
	Script ScriptStyle
	// Build commands run after the test patch is applied, before the start
	// marker (ScriptCommon only).
	Build []string

	Source Source
	// Notes explain fallbacks and ignored settings, for run_instance.log.
	Notes []string
}

// TestCommand is the command run between the markers: TestCmd followed by
// the directives, joined with spaces as the official harness joins them.
func (s TestSpec) TestCommand() string {
	return strings.Join(append([]string{s.TestCmd}, s.Directives...), " ")
}

// ScriptStyle selects the shape of a generated eval.sh.
type ScriptStyle string

const (
	// ScriptPython is the official Python eval script (conda, git
	// status/show/diff, install, git apply -v).
	ScriptPython ScriptStyle = "python"
	// ScriptCommon is the official script of the non-Python repositories:
	// no conda, no status/show/diff, no install; the test patch applied with
	// git apply --verbose --reject; build commands before the start marker;
	// `echo "No test files to reset"` when the patch modifies no file.
	ScriptCommon ScriptStyle = "common"
)

// Option configures For.
type Option func(*config) error

type config struct {
	mode         Mode
	namespace    string
	tag          string
	conda        *bool
	images       ImageMap
	overrides    *Overrides
	defaultImage string
	rules        string
}

// WithMode selects prebuilt-image or workspace mode. Default ModePrebuilt.
func WithMode(m Mode) Option {
	return func(c *config) error {
		if m != ModePrebuilt && m != ModeWorkspace {
			return fmt.Errorf("unknown mode %q", m)
		}
		c.mode = m
		return nil
	}
}

// WithNamespace sets the registry namespace of official instance images in
// prebuilt mode; "" names locally built images (sweb.eval.x86_64.<id>:tag,
// without the _1776_ rewrite, as upstream). Default "swebench".
func WithNamespace(ns string) Option {
	return func(c *config) error {
		if strings.ContainsAny(ns, " \t\n:") {
			return fmt.Errorf("invalid image namespace %q", ns)
		}
		c.namespace = ns
		return nil
	}
}

// WithTag sets the tag of official instance images. Default "latest".
func WithTag(tag string) Option {
	return func(c *config) error {
		if tag == "" || strings.ContainsAny(tag, " \t\n:/") {
			return fmt.Errorf("invalid image tag %q", tag)
		}
		c.tag = tag
		return nil
	}
}

// WithConda says whether eval.sh activates the official conda environment.
// Default: true in prebuilt mode, false in workspace mode.
func WithConda(on bool) Option {
	return func(c *config) error {
		c.conda = &on
		return nil
	}
}

// WithImages supplies the workspace-mode image map. Default none.
func WithImages(m ImageMap) Option {
	return func(c *config) error {
		c.images = m
		return nil
	}
}

// WithOverrides applies an override file (see LoadOverrides). Default none.
func WithOverrides(o *Overrides) Option {
	return func(c *config) error {
		c.overrides = o
		return nil
	}
}

// WithDefaultImage is the workspace-mode image for repositories that the
// image map and override file do not cover. Default "" (Image left empty).
func WithDefaultImage(image string) Option {
	return func(c *config) error {
		if strings.ContainsAny(image, " \t\n") {
			return fmt.Errorf("invalid image %q", image)
		}
		c.defaultImage = image
		return nil
	}
}

// WithRules selects the official rule set that decides which repositories
// are graded fail-only when a row has no eval_type. Default RulesV5.
func WithRules(rules string) Option {
	return func(c *config) error {
		if rules != RulesV4 && rules != RulesV5 {
			return fmt.Errorf("unknown rules %q (want %q or %q)", rules, RulesV4, RulesV5)
		}
		c.rules = rules
		return nil
	}
}

// failOnlyRepos are graded fail-only (FAIL_ONLY_REPOS); v5 added three.
var failOnlyRepos = map[string]string{
	"chartjs/Chart.js":      RulesV4,
	"processing/p5.js":      RulesV4,
	"markedjs/marked":       RulesV4,
	"bpmn-io/bpmn-js":       RulesV5,
	"openlayers/openlayers": RulesV5,
	"eslint/eslint":         RulesV5,
}

// FailOnly reports whether the official rules grade repo fail-only.
func FailOnly(repo, rules string) bool {
	since, ok := failOnlyRepos[repo]
	return ok && (since == RulesV4 || rules != RulesV4)
}

// ErrNoBaseCommit is returned for instances without base_commit.
var ErrNoBaseCommit = errors.New("instance has no base_commit")

var hexCommit = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// For builds the test spec of one instance. The test command, install
// steps and parser come, from lowest to highest precedence, from the
// official table (or, for a repository in no table, "pytest -rA" and the
// pytest parser), the row's own eval_script/log_parser/eval_type (v5), and
// the override file.
//
// A non-Python repository's table gives ScriptCommon, its test commands and
// build commands, no directives and the parser of logparse.ForInstance. A
// version missing from such a table takes the latest version's entry where
// versions are release lines (the Multimodal JavaScript repositories), as
// for the Python tables; where they are pull request numbers it is an error
// wrapping ErrUnknownVersion (each entry names one pull request's tests, so
// another's would run the wrong tests), unless the table has a single entry,
// the row carries its own eval_script, or the override file sets test_cmd.
func For(inst dataset.Instance, opts ...Option) (TestSpec, error) {
	c := config{mode: ModePrebuilt, namespace: "swebench", tag: "latest", rules: RulesV5}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return TestSpec{}, fmt.Errorf("spec options: %w", err)
		}
	}
	if inst.BaseCommit == "" {
		return TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, ErrNoBaseCommit)
	}
	if !hexCommit.MatchString(inst.BaseCommit) {
		// eval.sh names the commit unquoted, as upstream does.
		return TestSpec{}, fmt.Errorf("spec for %s: base_commit %q is not a hexadecimal commit id", inst.InstanceID, inst.BaseCommit)
	}
	s := TestSpec{
		InstanceID: inst.InstanceID,
		Repo:       inst.Repo,
		Version:    inst.Version,
		BaseCommit: inst.BaseCommit,
		TestPatch:  inst.TestPatch,
		TestFiles:  ModifiedFiles(inst.TestPatch),
		EvalType:   dataset.EvalTypePassAndFail,
		Conda:      c.mode == ModePrebuilt,
		Script:     ScriptPython,
	}
	if c.conda != nil {
		s.Conda = *c.conda
	}
	if FailOnly(inst.Repo, c.rules) {
		s.EvalType = dataset.EvalTypeFailOnly
	}

	style := DirectivesFiles
	var missing error
	if t := tables[inst.Repo]; t != nil {
		style = t.directives
		s.Parser = t.parser
		vs, ok := t.versions[inst.Version]
		s.Source = SourceOfficial
		if !ok {
			vs = t.versions[t.latest]
			s.Source = SourceRepoFallback
			s.Notes = append(s.Notes, fmt.Sprintf("version %q of %s is not in the official table (upstream raises KeyError); using the entry of version %s", inst.Version, inst.Repo, t.latest))
		}
		s.TestCmd, s.Install, s.Python, s.NanoCPUs = vs.testCmd, vs.install, vs.python, vs.nanoCPUs
		s.PreInstall = append([]string(nil), vs.preInstall...)
		s.EvalCommands = append([]string(nil), vs.evalCommands...)
	} else if cs, fallback, ok, err := lookupCommon(inst.Repo, inst.Version); ok {
		// Upstream's script for these repositories appends no directives.
		style = DirectivesNone
		s.Script = ScriptCommon
		s.Parser = logparse.ForInstance(inst.Repo, inst.InstanceID)
		s.Source = SourceOfficial
		s.TestCmd = cs.testCmd()
		s.Build = append([]string(nil), cs.build...)
		if fallback != "" {
			s.Source = SourceRepoFallback
			s.Notes = append(s.Notes, fmt.Sprintf("version %q of %s is not in the official table; using the entry of version %s", inst.Version, inst.Repo, fallback))
		}
		// Checked once the row and the override file have had their say:
		// either may supply the test command.
		missing = err
	} else {
		s.TestCmd, s.Parser, s.Source = testPytest, ParserPytest, SourceDefault
	}

	if inst.EvalScript != "" {
		s.DatasetScript = inst.EvalScript
		s.Source = SourceInstance
	}
	if inst.LogParser != "" {
		s.Parser = inst.LogParser
	}
	if inst.EvalType != "" {
		s.EvalType = inst.EvalType
	}

	repoWide, versioned := c.overrides.lookup(inst.Repo, inst.Version)
	if c.overrides != nil {
		repoWide.apply(&s, &style)
		versioned.apply(&s, &style)
		if s.DatasetScript != "" && s.Source == SourceOverride {
			s.Notes = append(s.Notes, "the row carries its own eval_script, so the override's test_cmd, install and eval_commands do not reach eval.sh")
		}
	}
	overrideCmd := (repoWide != nil && repoWide.TestCmd != nil) || (versioned != nil && versioned.TestCmd != nil)
	if missing != nil && s.DatasetScript == "" && !overrideCmd {
		return TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, missing)
	}
	s.Directives = Directives(inst.TestPatch, style)
	for _, w := range append(append([]string(nil), s.TestFiles...), s.Directives...) {
		if !shellSafe(w) {
			s.Notes = append(s.Notes, fmt.Sprintf("test path %q holds shell metacharacters; eval.sh writes it unquoted as upstream does (see ScriptOptions.QuoteUnsafePaths)", w))
		}
	}
	s.Image = c.image(inst, s.Version)
	return s, nil
}

func (c *config) image(inst dataset.Instance, version string) string {
	if c.mode == ModePrebuilt {
		if inst.Image != "" {
			return inst.Image
		}
		return OfficialImage(inst.InstanceID, c.namespace, c.tag)
	}
	// Workspace mode: version-specific entries before repository-wide ones;
	// at the same level the image map before the override file.
	repoWide, versioned := c.overrides.lookup(inst.Repo, version)
	if img, ok := c.images.lookupExact(inst.Repo, version); ok && version != "" {
		return img
	}
	if versioned != nil && versioned.Image != nil {
		return *versioned.Image
	}
	if img, ok := c.images.lookupExact(inst.Repo, ""); ok {
		return img
	}
	if repoWide != nil && repoWide.Image != nil {
		return *repoWide.Image
	}
	return c.defaultImage
}

// OfficialImage is the official instance image name:
// "{namespace}/sweb.eval.x86_64.{id lowercased}:{tag}" with every "__"
// replaced by "_1776_" (upstream applies the replacement to the whole
// name), or "sweb.eval.x86_64.{id lowercased}:{tag}" for namespace "".
func OfficialImage(instanceID, namespace, tag string) string {
	key := "sweb.eval.x86_64." + strings.ToLower(instanceID) + ":" + tag
	if namespace == "" {
		return key
	}
	return strings.ReplaceAll(namespace+"/"+key, "__", "_1776_")
}

func sortStrings(s []string) { sort.Strings(s) }
