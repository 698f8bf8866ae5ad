// Package cienv decides what a test does when something it needs from the
// machine is missing: on a developer's machine it skips with the reason; in
// CI (CI=true) it fails, because CI sets up everything the suites need and a
// skip there would hide a broken setup.
package cienv

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (the environment variable CI is
// "true", as CI services and .ci/run set it).
func InCI() bool { return os.Getenv("CI") == "true" }

// Skip skips t with the formatted reason, or fails it when [InCI].
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI=true: CI must provide this, so the test fails instead of skipping)", reason)
		return
	}
	t.Skip(reason)
}
