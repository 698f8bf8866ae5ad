package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --pro_checkout: a path that is not a directory is a usage error naming
// the flag; a SWE-bench Pro row whose run_scripts/ the checkout lacks is
// refused before anything runs, the error naming the file and no log
// directory written.
func TestProCheckoutFlag(t *testing.T) {
	dir := t.TempDir()
	const id = "instance_swebox-test__calc-76124d0f222e76900836fec30415316ca73f06b1-vnan"
	row, err := json.Marshal(map[string]any{
		"instance_id": id, "repo": "swebox-test/calc", "base_commit": "0123456789abcdef0123456789abcdef01234567",
		"patch": "diff", "test_patch": "", "problem_statement": "p",
		"fail_to_pass": "['tests/test_add.py::test_add']", "pass_to_pass": "[]",
		"selected_test_files_to_run": "['tests/test_add.py']", "before_repo_set_cmd": "git checkout x -- tests/test_add.py",
	})
	require.NoError(t, err)
	ds := filepath.Join(dir, "pro.jsonl")
	require.NoError(t, os.WriteFile(ds, append(row, '\n'), 0o644))
	checkout := filepath.Join(dir, "SWE-bench_Pro-os")
	require.NoError(t, os.MkdirAll(filepath.Join(checkout, "run_scripts", id), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "run_scripts", id, "run_script.sh"), []byte("#!/bin/bash\n"), 0o644))
	logs := filepath.Join(dir, "logs")

	type testCase struct {
		name, checkout string
		code           int
		stderr         string
	}
	for _, tc := range []testCase{
		{name: "not a directory", checkout: ds, code: exitUsage, stderr: "--pro_checkout"},
		{name: "no parser.py", checkout: checkout, code: exitFailure, stderr: "run_scripts/" + id + "/parser.py"},
		{name: "no checkout", checkout: "", code: exitFailure, stderr: "no SWE-bench_Pro-os checkout given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-d", ds, "-p", "gold", "--run_id", "pro", "--log_dir", logs, "--report_dir", dir}
			if tc.checkout != "" {
				args = append(args, "--pro_checkout", tc.checkout)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, nil, &stdout, &stderr)
			assert.Equal(t, tc.code, code, stderr.String())
			assert.Contains(t, stderr.String(), tc.stderr)
			assert.NoDirExists(t, logs)
		})
	}
}
