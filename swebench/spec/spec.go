package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
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
	// SourceRow: the row's own recipe set the test command and parser
	// (a task family's row fields, e.g. SWE-rebench's install_config).
	SourceRow Source = "row"
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
	// Grading is the rule that decides resolved; "" is the official
	// SWE-bench rule ([harness.GradingSWEBench]).
	Grading harness.Grading
	// Rules is the official release whose grading the row's family's
	// harness keeps (SWE-rebench's fork is 4.0.3: v4); "" grades by the
	// run's rules.
	Rules harness.Rules
	// FailToPass and PassToPass are the tests graded, as the row's family
	// reads them from its own fields (SWE-bench Pro's lowercase
	// fail_to_pass); nil grades the row's FAIL_TO_PASS and PASS_TO_PASS.
	FailToPass, PassToPass []string

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
	// default), ScriptCommon (the official non-Python form) or a style a
	// family registered ([RegisterScriptStyle]).
	Script ScriptStyle
	// Build commands run after the test patch is applied, before the start
	// marker (ScriptCommon only).
	Build []string
	// ImageAssets are the row's image_assets: binary files of the patches
	// that the harness puts in place (v5 stages them before the start
	// marker of the row's eval_script).
	ImageAssets ImageAssets
	// Downloads fetch the test patch's image assets after the reset, as
	// v4.1.0's JavaScript eval script does (ScriptCommon only).
	Downloads []string

	// Run is how the row's family's harness runs it where it differs
	// from the official harness; the zero value is the official way.
	Run Procedure

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
	mode         harness.Mode
	namespace    string
	tag          string
	conda        *bool
	images       ImageMap
	overrides    *Overrides
	defaultImage string
	rules        harness.Rules
	imageName    func(instanceID, namespace, tag string) string
	familyFiles  fs.FS
}

// WithMode selects prebuilt-image or workspace mode. Default
// harness.ModePrebuilt.
func WithMode(m harness.Mode) Option {
	return func(c *config) error {
		if !m.Valid() {
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
// are graded fail-only when a row has no eval_type ([harness.FailOnly]).
// Default harness.V5.
func WithRules(rules harness.Rules) Option {
	return func(c *config) error {
		if !rules.Valid() {
			return fmt.Errorf("unknown rules %q (want %q or %q)", rules, harness.V4, harness.V5)
		}
		c.rules = rules
		return nil
	}
}

// WithImageName names the prebuilt image of a row that names none itself,
// from its instance id and the run's namespace and tag: a family whose
// images are named otherwise than the official ones passes its own.
// Default [harness.InstanceImage].
func WithImageName(name func(instanceID, namespace, tag string) string) Option {
	return func(c *config) error {
		c.imageName = name
		return nil
	}
}

// WithFamilyFiles gives a family the files its harness reads beside the
// rows (SWE-bench Pro's run_scripts/ and dockerfiles/: a checkout of
// scaleapi/SWE-bench_Pro-os). Default none.
func WithFamilyFiles(fsys fs.FS) Option {
	return func(c *config) error {
		c.familyFiles = fsys
		return nil
	}
}

// FamilyFiles is the [WithFamilyFiles] of opts, or nil; an option that
// fails is ignored here (For reports it).
func FamilyFiles(opts ...Option) fs.FS {
	var c config
	for _, o := range opts {
		_ = o(&c)
	}
	return c.familyFiles
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
// build commands, no directives and the parser of harness.ParserForInstance. A
// version missing from such a table takes the latest version's entry where
// versions are release lines (the Multimodal JavaScript repositories), as
// for the Python tables; where they are pull request numbers it is an error
// wrapping ErrUnknownVersion (each entry names one pull request's tests, so
// another's would run the wrong tests), unless the table has a single entry,
// the row carries its own eval_script, or the override file sets test_cmd.
func For(inst dataset.Instance, opts ...Option) (TestSpec, error) {
	c := config{mode: harness.ModePrebuilt, namespace: harness.DefaultNamespace, tag: harness.DefaultTag, rules: harness.DefaultRules}
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
		Conda:      c.mode == harness.ModePrebuilt,
		Script:     ScriptPython,
	}
	if c.conda != nil {
		s.Conda = *c.conda
	}
	if harness.FailOnly(inst.Repo, c.rules) {
		s.EvalType = dataset.EvalTypeFailOnly
	}

	style := DirectivesFiles
	var missing error
	if t := tables[inst.Repo]; t != nil {
		style = t.directives
		s.Parser = harness.ParserForInstance(inst.Repo, inst.InstanceID)
		if t.noParser {
			s.Parser = ""
		}
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
	} else if inst.Repo == calypsoRepo {
		// Upstream's script for the JavaScript repositories appends no
		// directives; wp-calypso's test commands come from its test patch.
		style = DirectivesNone
		s.Script = ScriptCommon
		s.Parser = harness.ParserForRepo(inst.Repo)
		s.Source = SourceOfficial
		s.TestCmd = strings.Join(calypsoTestCmds(inst), "\n")
		if !calypsoVersions[inst.Version] {
			s.Source = SourceRepoFallback
			s.Notes = append(s.Notes, fmt.Sprintf("version %q of %s is not in the official table (upstream raises KeyError); its test commands are derived from the test patch as for the listed versions", inst.Version, inst.Repo))
		}
	} else if cs, fallback, ok, err := lookupCommon(inst.Repo, inst.Version); ok {
		// Upstream's script for these repositories appends no directives.
		style = DirectivesNone
		s.Script = ScriptCommon
		s.Parser = harness.ParserForInstance(inst.Repo, inst.InstanceID)
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
		s.TestCmd, s.Parser, s.Source = testPytest, harness.DefaultParser, SourceDefault
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
	if err := imageAssetsFor(&s, inst); err != nil {
		return TestSpec{}, err
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
	if c.mode == harness.ModePrebuilt {
		if inst.Image != "" {
			return inst.Image
		}
		if c.imageName != nil {
			return c.imageName(inst.InstanceID, c.namespace, c.tag)
		}
		return harness.InstanceImage(inst.InstanceID, c.namespace, c.tag)
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

func sortStrings(s []string) { sort.Strings(s) }

// Official reports whether the official harness's tables know repo: its
// rows run in the official instance images, which hold the repository's
// dependencies, and a generic image does not.
func Official(repo string) bool {
	if _, ok := tables[repo]; ok {
		return true
	}
	if _, ok := commonTables[repo]; ok {
		return true
	}
	return repo == calypsoRepo
}

// Table says which of the official harness's tables knows a repository.
type Table string

const (
	// TableNone: no table knows the repository.
	TableNone Table = ""
	// TablePython: the Python tables of SWE-bench, Lite and Verified
	// (MAP_REPO_VERSION_TO_SPECS_PY), humaneval included.
	TablePython Table = "python"
	// TableReleases: the JavaScript tables of SWE-bench Multimodal's dev
	// split, keyed by release line (Chart.js, marked, p5.js, react-pdf),
	// and wp-calypso, whose commands come from the test patch.
	TableReleases Table = "releases"
	// TablePulls: the tables of SWE-bench Multilingual, keyed by pull
	// request number.
	TablePulls Table = "pulls"
)

// TableOf reports which official table knows repo ([Official] is
// TableOf(repo) != TableNone).
func TableOf(repo string) Table {
	switch {
	case tables[repo] != nil:
		return TablePython
	case repo == calypsoRepo:
		return TableReleases
	case commonTables[repo] != nil:
		if _, ok := commonLatest[repo]; ok {
			return TableReleases
		}
		return TablePulls
	}
	return TableNone
}
