package grade

import "regexp"

// Tier is the v5 attribution of a failure: to the environment, or left
// ambiguous between the environment and the model's patch.
type Tier string

const (
	TierEnvironment Tier = "environment"
	TierAmbiguous   Tier = "ambiguous"
)

// The v5 failure reasons (run report failure_reasons).
const (
	BrowserLaunchFailed  = "browser_launch_failed"
	DisplayUnavailable   = "display_unavailable"
	OutOfMemory          = "out_of_memory"
	ContainerUnavailable = "container_unavailable"
	NetworkUnreachable   = "network_unreachable"
	MissingModule        = "missing_module"
	NoTestsCollected     = "no_tests_collected"
	TestsTimedOut        = "tests_timed_out"
)

// classifiers are 5.0.2's INFRA_FAILURE_SIGNATURES (infra_failure.py),
// tried in order, each with re.MULTILINE; the first that matches names the
// reason.
var classifiers = []struct {
	reason string
	tier   Tier
	re     *regexp.Regexp
}{
	{BrowserLaunchFailed, TierEnvironment, regexp.MustCompile(`(?m)Failed to launch|Failed to connect to the bus`)},
	{DisplayUnavailable, TierEnvironment, regexp.MustCompile(`(?m)cannot open display|Missing X server|unable to open X display`)},
	{OutOfMemory, TierEnvironment, regexp.MustCompile(`(?m)Cannot allocate memory|OutOfMemoryError|^Killed$`)},
	{ContainerUnavailable, TierEnvironment, regexp.MustCompile(`(?m)Error response from daemon|Cannot connect to the Docker daemon`)},
	{NetworkUnreachable, TierEnvironment, regexp.MustCompile(`(?m)Could not resolve host|Temporary failure in name resolution`)},
	{MissingModule, TierAmbiguous, regexp.MustCompile(`(?m)Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError`)},
	{NoTestsCollected, TierAmbiguous, regexp.MustCompile(`(?m)no tests ran|collected 0 items`)},
	{TestsTimedOut, TierAmbiguous, regexp.MustCompile(`(?m)Timeout error: ` + pyDigit + `+ seconds exceeded`)},
}

// ClassifyFailure names the likely cause of a failed or unresolved
// instance from its logs (5.0.2 reads test_output.txt, then
// run_instance.log, joined by a newline), or "" when no rule applies. v5
// reports these in failure_reasons and, for an unusable log, in
// report.json's infra_failure_reason; they are advisory.
func ClassifyFailure(log string) string {
	for _, c := range classifiers {
		if c.re.MatchString(log) {
			return c.reason
		}
	}
	return ""
}

// FailureTier is the tier of a reason; unknown reasons are ambiguous.
func FailureTier(reason string) Tier {
	for _, c := range classifiers {
		if c.reason == reason {
			return c.tier
		}
	}
	return TierAmbiguous
}
