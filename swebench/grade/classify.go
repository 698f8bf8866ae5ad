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

// classifiers are tried in order; environment reasons come first. The
// patterns are swebox's own: the official classifier's regexes are not
// reproduced, only its reason names and tiers.
var classifiers = []struct {
	reason string
	tier   Tier
	re     *regexp.Regexp
}{
	{BrowserLaunchFailed, TierEnvironment, regexp.MustCompile(`(?i)failed to launch (?:the )?browser|no usable sandbox|cannot start (?:chrome|chromium)|ChromeHeadless (?:crashed|failed)|Running as root without --no-sandbox`)},
	{DisplayUnavailable, TierEnvironment, regexp.MustCompile(`(?i)cannot open display|can't open display|no display name and no \$DISPLAY|Missing X server or \$DISPLAY`)},
	{OutOfMemory, TierEnvironment, regexp.MustCompile(`(?i)\bMemoryError\b|out of memory|JavaScript heap out of memory|Cannot allocate memory|OOMKilled`)},
	{ContainerUnavailable, TierEnvironment, regexp.MustCompile(`(?i)No such container|container [0-9a-f]+ is not running|Error response from daemon`)},
	{NetworkUnreachable, TierEnvironment, regexp.MustCompile(`(?i)Network is unreachable|Temporary failure in name resolution|Could not resolve host|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)`)},
	{TestsTimedOut, TierAmbiguous, regexp.MustCompile(`Timeout error: [0-9]+ seconds exceeded|>>>>> Tests Timed Out`)},
	{MissingModule, TierAmbiguous, regexp.MustCompile(`ModuleNotFoundError: No module named|ImportError: No module named|Cannot find module '`)},
	{NoTestsCollected, TierAmbiguous, regexp.MustCompile(`(?m)collected 0 items|^no tests ran|No tests found|^Ran 0 tests`)},
}

// ClassifyFailure names the likely cause of a failed or unresolved
// instance from its logs (test_output.txt, run_instance.log), or "" when
// no rule applies. v5 reports these in failure_reasons; they are advisory.
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
