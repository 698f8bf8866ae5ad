package taskrepo_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/taskrepo"
)

// fixture is the task repository the upstream comparison uses
// (swebench/imagebuild/testdata/taskrepo); tests copy it and break it.
const fixture = "../imagebuild/testdata/taskrepo"

func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(fixture)))
	return dst
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// TestBadYAMLNamesFileLineField: a malformed sweb.yaml or task.yaml is an
// error naming the file, the line and the field.
func TestBadYAMLNamesFileLineField(t *testing.T) {
	type testCase struct {
		name, file, text string
		line             int
		field, msg       string
	}
	for _, tc := range []testCase{
		{"datasets a string", "sweb.yaml", "splits: [test]\ndatasets: swebox/Demo\n", 2, "datasets", `want a list of strings, got the string "swebox/Demo"`},
		{"a dataset not a string", "sweb.yaml", "datasets:\n  - swebox/Demo\n  - {name: x}\n", 3, "datasets[1]", "want a string, got a mapping"},
		{"no datasets", "sweb.yaml", "splits: [test]\ndatasets: []\n", 2, "datasets", "names no datasets"},
		{"splits a mapping", "sweb.yaml", "datasets: [a]\nsplits:\n  test: 1\n", 3, "splits", "want a list of strings, got a mapping"},
		{"syntax", "sweb.yaml", "datasets: [a\nsplits: [test]\n", 1, "", "not valid YAML: did not find expected ',' or ']'"},
		{"not a mapping", "sweb.yaml", "- a\n- b\n", 1, "", "want a mapping, got a list"},
		{"task datasets a number", "tasks/swebox__demo-1/task.yaml", "instance_id: swebox__demo-1\nrepo: swebox/demo\nbase_commit: 0123456789abcdef0123456789abcdef01234567\nsplit: test\ndatasets: 7\n", 5, "datasets", "want a list of strings, got int 7"},
		{"task split a list", "tasks/swebox__demo-1/task.yaml", "instance_id: swebox__demo-1\nrepo: swebox/demo\nsplit: [test]\n", 3, "split", "want a string, got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			path := filepath.Join(dir, tc.file)
			write(t, path, tc.text)
			r, err := taskrepo.Open(dir)
			require.NoError(t, err)
			if tc.file == "sweb.yaml" {
				_, err = r.Select(nil, nil)
			} else {
				_, err = r.Load(nil)
			}
			var ie *dataset.InputError
			require.ErrorAs(t, err, &ie, "%v", err)
			assert.Equal(t, path, ie.File)
			assert.Equal(t, tc.line, ie.Line, "%v", err)
			assert.Equal(t, tc.field, ie.Field)
			assert.Contains(t, err.Error(), tc.msg)
			assert.True(t, strings.HasPrefix(err.Error(), path+":"), "the message starts with file:line: %v", err)
		})
	}
}

// TestCheckReportsUpstreamsErrors: the guard of `images build` finds what
// upstream's check_task_repo calls errors.
func TestCheckReportsUpstreamsErrors(t *testing.T) {
	dir := copyFixture(t)
	task := filepath.Join(dir, "tasks", "swebox__demo-1")
	yaml, err := os.ReadFile(filepath.Join(task, "task.yaml"))
	require.NoError(t, err)
	write(t, filepath.Join(task, "task.yaml"), strings.Replace(strings.Replace(string(yaml),
		"swebench/sweb.eval.x86_64.swebox_1776_demo-1:latest", "other/image:1", 1), "split: test", "split: nightly", 1))
	require.NoError(t, os.Remove(filepath.Join(task, "eval.sh")))
	write(t, filepath.Join(dir, "tasks", "swebox__demo-4", "gold.patch"), "not a diff\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "tasks", "stray"), 0o755))
	r, err := taskrepo.Open(dir)
	require.NoError(t, err)
	err = r.Check()
	var ce *taskrepo.CheckError
	require.ErrorAs(t, err, &ce)
	var got []string
	for _, p := range ce.Problems {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{
		"error: tasks/swebox__demo-1: missing eval.sh",
		"error: tasks/swebox__demo-1: split 'nightly' is not in sweb.yaml",
		"error: tasks/swebox__demo-1: image 'other/image:1' is not the derived name",
		"error: tasks/swebox__demo-4: gold.patch does not look like a diff",
		"error: tasks/stray: no task.yaml, so it is not a task",
	}, got)
	assert.NoError(t, mustOpen(t, fixture).Check(), "the fixture itself is clean")
}

func mustOpen(t *testing.T, dir string) *taskrepo.Repo {
	t.Helper()
	r, err := taskrepo.Open(dir)
	require.NoError(t, err)
	return r
}

func TestSelectionErrors(t *testing.T) {
	r := mustOpen(t, fixture)
	_, err := r.Load([]string{"swebox__demo-1", "nope", "also-nope"})
	var ue *taskrepo.UnknownTasksError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []string{"also-nope", "nope"}, ue.IDs)
	_, err = r.Select(nil, []string{"swebox/Other"})
	var de *taskrepo.UnknownDatasetError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "does not publish swebox/Other. It publishes: swebox/Demo swebox/Demo_Lite")
	_, err = r.ForEval("train", nil)
	var se *taskrepo.NoSplitError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "has no tasks in split 'train'. It has: deprecated dev test")
	_, err = taskrepo.Open(t.TempDir())
	assert.True(t, errors.Is(err, taskrepo.ErrNotTaskRepo))
}
