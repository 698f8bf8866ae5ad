package swebench

import (
	"bytes"
	"context"
	"fmt"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/strict"
)

// strictRun is the strict part of one evaluation of an instance
// (Config.GradingMode GradingStrict; see package strict).
type strictRun struct {
	run     strict.Run
	inst    dataset.Instance
	channel bool
}

func newStrictRun(inst dataset.Instance) *strictRun {
	return &strictRun{run: strict.NewRun(), inst: inst}
}

// script rewrites the eval script; the plugin is staged beside it.
func (s *strictRun) script(script string) string {
	tests := append(append([]string{}, s.inst.FailToPass...), s.inst.PassToPass...)
	out, channel := s.run.Script(script, strict.ScriptInput{
		BaseCommit: s.inst.BaseCommit, TestPatch: s.inst.TestPatch, Tests: tests, PluginDir: stagedDir,
	})
	s.channel = channel
	return out
}

// runCommand reads the script into memory and removes its file (it holds
// the key of the runner's report) before running it, where the sandbox
// user may remove it (prebuilt mode, a copied workspace).
func (s *strictRun) runCommand(path string) string {
	return `exec 2>&1; swebox_script="$(< ` + path + `)"; rm -f ` + path + ` 2>/dev/null; eval "$swebox_script"`
}

// collect reads back what the script and the plugin left in the sandbox.
func (s *strictRun) collect(ctx context.Context, e *evaluator, sb *sandbox.Sandbox) (*strict.Evidence, error) {
	cmd, sep := s.run.CollectCommand()
	var out bytes.Buffer
	r, err := e.exec(ctx, sb, sandbox.ExecRequest{Cmd: cmd, WorkingDir: harness.RepoDir, Timeout: diffTimeout, Stdout: &out, OutputLimit: 4 << 10})
	if err != nil {
		return nil, fmt.Errorf("read the runner's report: %w", err)
	}
	if !r.Success() {
		return nil, fmt.Errorf("read the runner's report: exit %d: %s", r.ExitCode, r.Stderr.String())
	}
	ev := s.run.ParseCollected(out.Bytes(), sep, s.channel)
	return &ev, nil
}
