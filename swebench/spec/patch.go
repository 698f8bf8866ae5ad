package spec

import (
	"fmt"

	"github.com/swebox/swebox/swebench/harness"
)

// ContainerPatchPath is where the official harness copies the model patch.
const ContainerPatchPath = "/tmp/patch.diff"

// PatchCommands returns the official patch-apply attempts for a rule set,
// as argv lists run in /testbed; the first that exits 0 wins.
//
// v4 (v4.1.0): git apply --verbose; git apply --verbose --reject;
// patch --batch --fuzz=5 -p1 -i. Nothing is reset between attempts, so a
// failed --reject leaves partial edits and .rej files for the next one.
//
// v5: git apply --verbose; git apply --verbose --3way; git apply --verbose
// --reject; patch --batch --forward --fuzz=5 -p1 -i, with ResetCommands
// run before every attempt after the first, and ReverseCheckCommand when
// all fail.
func PatchCommands(rules harness.Rules, patchPath string) ([][]string, error) {
	switch rules {
	case harness.V4:
		return [][]string{
			{"git", "apply", "--verbose", patchPath},
			{"git", "apply", "--verbose", "--reject", patchPath},
			{"patch", "--batch", "--fuzz=5", "-p1", "-i", patchPath},
		}, nil
	case harness.V5:
		return [][]string{
			{"git", "apply", "--verbose", patchPath},
			{"git", "apply", "--verbose", "--3way", patchPath},
			{"git", "apply", "--verbose", "--reject", patchPath},
			{"patch", "--batch", "--forward", "--fuzz=5", "-p1", "-i", patchPath},
		}, nil
	}
	return nil, fmt.Errorf("patch commands: unknown rules %q (want %q or %q)", rules, harness.V4, harness.V5)
}

// ResetCommands restore a pristine tree between v5 patch attempts
// (upstream runs "git checkout -- . ; git clean -fd" through bash: both run
// and their exit status is ignored).
func ResetCommands() [][]string {
	return [][]string{
		{"git", "checkout", "--", "."},
		{"git", "clean", "-fd"},
	}
}

// ReverseCheckCommand is v5's last resort: when every attempt failed but
// this exits 0, the patch counts as already applied.
func ReverseCheckCommand(patchPath string) []string {
	return []string{"git", "apply", "--check", "--reverse", patchPath}
}
