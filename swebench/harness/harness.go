package harness

import "strings"

// Rules selects the official harness release whose behaviour is reproduced.
type Rules string

const (
	// V4 is SWE-bench v4.1.0, the widely deployed release.
	V4 Rules = "v4"
	// V5 is SWE-bench v5.x: pytest skips "SKIPPED [N]" summary lines,
	// pytest_v2 keys full names with spaces, seaborn no longer raises
	// IndexError, skipped FAIL_TO_PASS tests fail, three more repositories
	// are graded fail-only.
	V5 Rules = "v5"
	// DefaultRules is what an empty Rules means.
	DefaultRules = V5
)

// Valid reports whether r is one of the known rule sets ("" is not; see
// [Rules.OrDefault]).
func (r Rules) Valid() bool { return r == V4 || r == V5 }

// OrDefault is r, or [DefaultRules] when r is empty.
func (r Rules) OrDefault() Rules {
	if r == "" {
		return DefaultRules
	}
	return r
}

// Grading names the rule that decides, from the tests' statuses, whether
// an instance is resolved. Families whose harness departs from the
// official rule on purpose name their own, in their file of
// swebench/family.
type Grading string

// GradingSWEBench is the official rule (get_resolution_status): every
// FAIL_TO_PASS and every PASS_TO_PASS test succeeds; a missing test fails.
// "" means it.
const GradingSWEBench Grading = "swe-bench"

// Valid reports whether g is "" or the official rule; the
// rules families define themselves are registered with grade.RegisterRule.
func (g Grading) Valid() bool {
	return g == "" || g == GradingSWEBench
}

// OrDefault is g, or [GradingSWEBench] when g is empty.
func (g Grading) OrDefault() Grading {
	if g == "" {
		return GradingSWEBench
	}
	return g
}

// Mode says how the repository gets into the container.
type Mode string

const (
	// ModeWorkspace checks the repository out on the host at base_commit
	// and mounts (or copies) it at [RepoDir] in an image chosen per
	// repository.
	ModeWorkspace Mode = "workspace"
	// ModePrebuilt uses the official instance images, which hold the
	// repository at [RepoDir] and a conda environment named testbed.
	ModePrebuilt Mode = "prebuilt"
)

// Valid reports whether m is one of the two modes.
func (m Mode) Valid() bool { return m == ModeWorkspace || m == ModePrebuilt }

// RepoDir is where the repository lives in the container, as in the
// official images and eval scripts.
const RepoDir = "/testbed"

// Markers the eval script and the harness write (swebench/harness/constants).
// Under the script's `set -x` the start and end markers appear in
// test_output.txt as "+ : '>>>>> Start Test Output'".
const (
	StartTestOutput      = ">>>>> Start Test Output"
	EndTestOutput        = ">>>>> End Test Output"
	ExitCodeMarker       = ">>>>> Test Exit Code"
	PatchApplyFailMarker = ">>>>> Patch Apply Failed"
	ResetFailedMarker    = ">>>>> Reset Failed"
	TestsErroredMarker   = ">>>>> Tests Errored"
	TestsTimedOutMarker  = ">>>>> Tests Timed Out"
	// AppliedPatchMarker and PatchAlreadyAppliedMarker begin the lines of
	// run_instance.log that say which patch attempt worked.
	AppliedPatchMarker        = ">>>>> Applied Patch"
	PatchAlreadyAppliedMarker = ">>>>> Patch Already Applied"
)

// failOnlyRepos is FAIL_ONLY_REPOS: repositories whose parsers list only
// failing tests, with the release that added each.
var failOnlyRepos = map[string]Rules{
	"chartjs/Chart.js":      V4,
	"processing/p5.js":      V4,
	"markedjs/marked":       V4,
	"bpmn-io/bpmn-js":       V5,
	"openlayers/openlayers": V5,
	"eslint/eslint":         V5,
}

// FailOnly reports whether the official rules grade repo fail-only. v4 lists
// Chart.js, p5.js and marked; v5 adds bpmn-js, openlayers and eslint. An
// empty rules means [DefaultRules]; a rule set that is not [Rules.Valid]
// gets the v4 list, the repositories every release agrees on.
func FailOnly(repo string, rules Rules) bool {
	since, ok := failOnlyRepos[repo]
	return ok && (since == V4 || rules.OrDefault() == V5)
}

// Image names of the official instance images.
const (
	// DefaultNamespace is the registry namespace of the published images.
	DefaultNamespace = "swebench"
	// DefaultTag is their tag.
	DefaultTag = "latest"
)

// ImageUnderscores is what the harnesses write in image names for the
// "__" of an instance id or "owner__repo" (SWE-smith's repository images
// too).
const ImageUnderscores = "_1776_"

// InstanceImage is the official instance image name:
// "{namespace}/sweb.eval.x86_64.{id lowercased}:{tag}" with every "__"
// replaced by "_1776_" (upstream applies the replacement to the whole
// name), or "sweb.eval.x86_64.{id lowercased}:{tag}" for namespace "" (the
// images the official harness builds locally).
func InstanceImage(instanceID, namespace, tag string) string {
	key := LocalInstanceImage(instanceID, "x86_64", tag)
	if namespace == "" {
		return key
	}
	return strings.ReplaceAll(namespace+"/"+key, "__", "_1776_")
}

// Names of the images the official harness builds locally (v4.1.0 with
// --namespace none): base, env and instance tiers. lang is upstream's
// language extension (py, js, go, rs, java, php, rb, c), arch x86_64 or
// arm64.

// BaseImage is "sweb.base.{lang}.{arch}[.{specsHash}]:{tag}"; specsHash
// is empty for a repository without docker specs.
func BaseImage(lang, arch, specsHash, tag string) string {
	if specsHash == "" {
		return "sweb.base." + lang + "." + arch + ":" + tag
	}
	return "sweb.base." + lang + "." + arch + "." + specsHash + ":" + tag
}

// EnvImage is "sweb.env.{lang}.{arch}.{hash}:{tag}".
func EnvImage(lang, arch, hash, tag string) string {
	return "sweb.env." + lang + "." + arch + "." + hash + ":" + tag
}

// TaskImage is the name SWE-bench 5.0.2's image builder gives a task
// repository's image (ImageSpec.name): LocalInstanceImage, under namespace
// (when not "") with "__" replaced by "_1776_", and all of it lower case.
// arch is the name's ("x86_64" for amd64 images, or "arm64").
func TaskImage(instanceID, namespace, tag, arch string) string {
	key := LocalInstanceImage(instanceID, arch, tag)
	if namespace != "" {
		key = strings.ReplaceAll(namespace+"/"+key, "__", "_1776_")
	}
	return strings.ToLower(key)
}

// LocalInstanceImage is "sweb.eval.{arch}.{id lowercased}:{tag}".
func LocalInstanceImage(instanceID, arch, tag string) string {
	return "sweb.eval." + arch + "." + strings.ToLower(instanceID) + ":" + tag
}
