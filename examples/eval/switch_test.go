package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's "Switching from the official harness" table: the official
// flags parse; those swebox does not need are accepted with one notice
// each, and those that would change the run if ignored are refused by name.
func TestOfficialFlags(t *testing.T) {
	base := []string{"-p", "gold"}
	type testCase struct {
		name    string
		args    []string
		refused string // part of the error; "" when accepted
		notices []string
	}
	for _, tc := range []testCase{
		{name: "dataset and split", args: []string{"-d", "lite", "-s", "dev"}},
		{name: "long names", args: []string{"--dataset_name", "SWE-bench/SWE-bench_Verified", "--split", "test"}},
		{name: "instance ids", args: []string{"-i", "a", "b", "c"}},
		{name: "workers and timeout", args: []string{"--max_workers", "0", "-t", "60"}},
		{name: "run id short", args: []string{"-id", "r2"}},
		{name: "report dir", args: []string{"--report_dir", "out"}},
		{name: "rewrite reports", args: []string{"--rewrite_reports", "true"}},
		{name: "namespace and tag", args: []string{"-n", "swebench", "--instance_image_tag", "latest"}},
		{name: "env image tag", args: []string{"--env_image_tag", "latest"}, notices: []string{"notice: --env_image_tag: swebox builds no environment images; ignored"}},
		{name: "force rebuild", args: []string{"--force_rebuild", "true"}, notices: []string{"notice: --force_rebuild: swebox builds no images, so there is nothing to rebuild; ignored"}},
		{name: "force rebuild with a namespace", args: []string{"--force_rebuild", "true", "-n", "swebench"}, refused: "cannot force rebuild and use a namespace"},
		{name: "force rebuild false with a namespace", args: []string{"--force_rebuild", "false", "-n", "swebench"}, notices: []string{"notice: --force_rebuild: swebox builds no images, so there is nothing to rebuild; ignored"}},
		{name: "cache level", args: []string{"--cache_level", "instance", "--clean", "true"}, notices: []string{
			"notice: --cache_level: swebox builds no images, so there are none to keep or remove; ignored",
			"notice: --clean: swebox builds no images, so there are none to remove; ignored"}},
		{name: "cache level not official", args: []string{"--cache_level", "all"}, refused: "--cache_level must be one of none, base, env, instance"},
		{name: "open file limit", args: []string{"--open_file_limit", "8192"}, notices: []string{"notice: --open_file_limit: the official harness raises its own process's open-file limit; swebox does not need to, and each container's limit stays 4096; ignored"}},
		{name: "open file limit not a number", args: []string{"--open_file_limit", "many"}, refused: "want an integer"},
		{name: "modal false", args: []string{"--modal", "false"}, notices: []string{"notice: --modal: false is the default: the run uses Docker engines"}},
		{name: "modal true", args: []string{"--modal", "true"}, refused: "--modal true: swebox has no Modal backend"},
		{name: "modal alone", args: []string{"--modal"}, refused: "--modal true: swebox has no Modal backend"},
		{name: "v5 cli workers", args: []string{"-j", "4"}, refused: "flag provided but not defined"},
		{name: "v5 cli gold", args: []string{"--gold"}, refused: "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, base...)
			if tc.name != "run id short" {
				args = append(args, "--run_id", "r")
			}
			o, err := parseRunFlags(defaultRunOptions(), args)
			if tc.refused == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.notices, o.notices())
				return
			}
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tc.refused)
		})
	}
}

// The notices reach the user, one line per flag, before the run.
func TestOfficialFlagNoticesArePrinted(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--cache_level", "env", "--clean", "false", "-p", "gold", "--run_id", "r", "-d", filepath.Join(t.TempDir(), "missing.jsonl")}, nil, &out, &errOut)
	assert.Equal(t, exitFailure, code, "the dataset is missing")
	assert.True(t, strings.HasPrefix(errOut.String(), "notice: --cache_level: swebox builds no images, so there are none to keep or remove; ignored\nnotice: --clean: swebox builds no images, so there are none to remove; ignored\n"), errOut.String())
}
