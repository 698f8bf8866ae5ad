package swebench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/swebox/swebox/sandbox"
)

// Caps of what an InstanceResult carries of the logs, so that a caller can
// show what happened without reading run_instance.log or test_output.txt.
const (
	// PatchOutputLimit caps each PatchAttempt's Output: its head and tail,
	// with a note of the bytes dropped between them.
	PatchOutputLimit = 8 << 10
	// LogTailLimit caps InstanceResult.LogTail.
	LogTailLimit = 8 << 10
)

// PatchAttempt is one command of the official patch fallbacks, as it ran
// in the sandbox: the model patch is applied by the first that exits 0.
type PatchAttempt struct {
	// Command is the command line, e.g. "git apply --verbose --reject
	// /testbed/.git/patch.diff".
	Command string
	// ExitCode is its exit status; TimedOut reports that it ran past its
	// time.
	ExitCode int
	TimedOut bool `json:",omitempty"`
	// Output is what it printed, standard output then standard error, at
	// most PatchOutputLimit bytes (head and tail).
	Output string
}

// Applied reports whether the attempt applied the patch.
func (a PatchAttempt) Applied() bool { return a.ExitCode == 0 && !a.TimedOut }

// patchAttempt records r, the result of running argv.
func patchAttempt(argv []string, r sandbox.ExecResult) PatchAttempt {
	out := sandbox.NewOutputBuffer(PatchOutputLimit)
	_, _ = io.WriteString(out, r.Stdout.String())
	_, _ = io.WriteString(out, r.Stderr.String())
	return PatchAttempt{Command: strings.Join(argv, " "), ExitCode: r.ExitCode, TimedOut: r.TimedOut, Output: out.Output().String()}
}

// fileTail returns the last n bytes of the file at path, led by a note of
// how many bytes came before them when there were more. The file is one
// the host wrote (test_output.txt in the log directory), not one a sandbox
// can reach.
func fileTail(path string, n int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	skip := max(fi.Size()-n, 0)
	if _, err := f.Seek(skip, io.SeekStart); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return "", err
	}
	if skip > 0 {
		return fmt.Sprintf("[... %d bytes before ...]\n%s", skip, b), nil
	}
	return string(b), nil
}
