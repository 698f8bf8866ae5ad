package main

import (
	"context"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

func TestParseRunFlags(t *testing.T) {
	base := []string{"-p", "gold", "--run_id", "r1"}
	type testCase struct {
		name  string
		args  []string
		check func(t *testing.T, o runOptions)
		err   string // substring of the usage error; "" for success
	}
	cases := []testCase{
		{name: "official defaults", args: base, check: func(t *testing.T, o runOptions) {
			assert.Equal(t, "SWE-bench/SWE-bench_Lite", o.DatasetName)
			assert.Equal(t, "test", o.Split)
			assert.Equal(t, 4, o.MaxWorkers)
			assert.Equal(t, 1800, o.Timeout)
			assert.Equal(t, ".", o.ReportDir)
			assert.Equal(t, "swebench", o.Namespace)
			assert.Equal(t, "latest", o.InstanceImageTag)
			assert.Equal(t, "v5", o.Grading)
			assert.Equal(t, "logs", o.LogDir)
			assert.False(t, o.RewriteReports)
			assert.Empty(t, o.InstanceIDs)
		}},
		{name: "short and long names", args: []string{"-d", "data.jsonl", "--predictions_path", "p.jsonl", "-id", "r", "-t", "60", "-s", "dev"}, check: func(t *testing.T, o runOptions) {
			assert.Equal(t, "data.jsonl", o.DatasetName)
			assert.Equal(t, "p.jsonl", o.PredictionsPath)
			assert.Equal(t, "r", o.RunID)
			assert.Equal(t, 60, o.Timeout)
			assert.Equal(t, "dev", o.Split)
		}},
		{name: "single-dash long names", args: []string{"-dataset_name=x.json", "-predictions_path", "gold", "-run_id", "r"}, check: func(t *testing.T, o runOptions) {
			assert.Equal(t, "x.json", o.DatasetName)
		}},
		{name: "instance ids nargs plus", args: append([]string{"--instance_ids", "a__b-1", "a__b-2", "--max_workers", "2"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, []string{"a__b-1", "a__b-2"}, o.InstanceIDs)
			assert.Equal(t, 2, o.MaxWorkers)
		}},
		{name: "instance ids comma separated and repeated", args: append([]string{"-i", "a,b", "-i=c d", "--instance_ids", "e"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, []string{"a", "b", "c", "d", "e"}, o.InstanceIDs)
		}},
		{name: "str2bool with a following word", args: append([]string{"--rewrite_reports", "yes", "--keep_workspaces", "F"}, base...), check: func(t *testing.T, o runOptions) {
			assert.True(t, o.RewriteReports)
			assert.False(t, o.KeepWorkspaces)
		}},
		{name: "str2bool alone and with equals", args: append([]string{"--rewrite_reports", "--keep_workspaces=1"}, base...), check: func(t *testing.T, o runOptions) {
			assert.True(t, o.RewriteReports)
			assert.True(t, o.KeepWorkspaces)
		}},
		{name: "repeatable hosts and repos", args: append([]string{"--docker_host", "unix:///a.sock", "--docker_host", "tcp://h:2376", "--repos", "/r1", "--repos", "/r2"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, []string{"unix:///a.sock", "tcp://h:2376"}, o.DockerHosts)
			assert.Equal(t, []string{"/r1", "/r2"}, o.Repos)
		}},
		{name: "shard", args: append([]string{"--shard", "2/8"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, swebench.Shard{Index: 2, Count: 8}, swebench.Shard(o.Shard))
		}},
		{name: "max_workers zero runs sequentially", args: append([]string{"--max_workers", "0"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, 1, o.MaxWorkers)
		}},
		{name: "namespace none with workspace flags", args: append([]string{"--namespace", "none", "--image", "img", "--repos", "/r"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, harness.ModeWorkspace, planMode(t, o, nil))
		}},
		{name: "grading v4", args: append([]string{"--grading", "v4"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, "v4", o.Grading)
		}},

		{name: "unknown flag", args: append([]string{"--cache", "env"}, base...), err: "flag provided but not defined: -cache"},
		{name: "missing predictions", args: []string{"--run_id", "r"}, err: "--predictions_path is required"},
		{name: "missing run id", args: []string{"-p", "gold"}, err: "--run_id is required"},
		{name: "unsafe run id", args: []string{"-p", "gold", "--run_id", "../x"}, err: "--run_id"},
		{name: "same flag under two names", args: append([]string{"-d", "a.json", "--dataset_name", "b.json"}, base...), err: "-d and --dataset_name name the same setting"},
		{name: "positional argument", args: append([]string{"extra"}, base...), err: `unexpected argument "extra"`},
		{name: "bad grading", args: append([]string{"--grading", "v3"}, base...), err: `--grading "v3": want v4 or v5`},
		{name: "bad timeout", args: append([]string{"--timeout", "0"}, base...), err: "--timeout must be a positive"},
		{name: "timeout not a number", args: append([]string{"--timeout", "1h"}, base...), err: "want an integer"},
		{name: "bad shard", args: append([]string{"--shard", "9/8"}, base...), err: "want 1 <= I <= N"},
		{name: "shard without slash", args: append([]string{"--shard", "3"}, base...), err: "want I/N"},
		{name: "bad bool", args: append([]string{"--rewrite_reports=maybe"}, base...), err: "want a boolean"},
		{name: "empty instance ids", args: append([]string{"--instance_ids="}, base...), err: "no instance id given"},
		{name: "namespace with image", args: append([]string{"--namespace", "swebench", "--image", "x"}, base...), err: "--image conflicts with --namespace: the first applies to workspace mode"},
		{name: "tag with repos", args: append([]string{"--instance_image_tag", "v1", "--repos", "/r"}, base...), err: "--repos conflicts with --instance_image_tag: the first applies to workspace mode"},
		{name: "kubeconfig with docker_host", args: append([]string{"--kubeconfig", "k.yaml", "--docker_host", "tcp://h:2375"}, base...), err: "--kubeconfig and --docker_host choose different engines"},
		{name: "kube_namespace without kubeconfig", args: append([]string{"--kube_namespace", "ns"}, base...), err: "--kube_namespace applies to Kubernetes"},
		{name: "empty kube_namespace", args: append([]string{"--kubeconfig", "k.yaml", "--kube_namespace", ""}, base...), err: "--kube_namespace must not be empty"},
		{name: "namespace none on kubernetes", args: append([]string{"--kubeconfig", "k.yaml", "-n", "none", "-d", "lite"}, base...),
			err: "--namespace none with --kubeconfig: images built here go to this machine's Docker engine, which the cluster's nodes do not pull from. Build them with Docker and push them to a registry the cluster pulls from (eval images build -d lite --push REGISTRY/NAMESPACE), then run with --kubeconfig and --namespace REGISTRY/NAMESPACE"},
		{name: "empty namespace on kubernetes", args: append([]string{"--kubeconfig", "k.yaml", "--namespace", ""}, base...), err: "--namespace '' with --kubeconfig"},
		{name: "task repo on kubernetes", args: append([]string{"--kubeconfig", "k.yaml", "--task_repo", "tasks-repo"}, base...), err: "--task_repo with --kubeconfig: the task images are built on this machine's Docker engine"},
		{name: "task repo with namespace", args: append([]string{"--task_repo", "tr", "-n", "swebench"}, base...), err: "each row names its own image"},
		{name: "task repo in workspace mode", args: append([]string{"--task_repo", "tr", "--workspace"}, base...), err: "does not run workspace mode"},
		{name: "image placement on by default, window max_workers", args: append([]string{"--kubeconfig", "k.yaml", "--max_workers", "3"}, base...), check: func(t *testing.T, o runOptions) {
			assert.True(t, o.KubeImageAffinity)
			assert.Zero(t, runConfig(o).PrepullWindow, "0 leaves the library's default (MaxWorkers) to the run")
		}},
		{name: "prepull window and affinity off", args: append([]string{"--kubeconfig", "k.yaml", "--prepull_window", "-1", "--kube_image_affinity", "no"}, base...), check: func(t *testing.T, o runOptions) {
			assert.False(t, o.KubeImageAffinity)
			assert.Equal(t, -1, runConfig(o).PrepullWindow)
		}},
		{name: "prepull window 5", args: append([]string{"--kubeconfig", "k.yaml", "--prepull_window", "5"}, base...), check: func(t *testing.T, o runOptions) {
			assert.Equal(t, 5, runConfig(o).PrepullWindow)
		}},
		{name: "prepull_window without kubeconfig", args: append([]string{"--prepull_window", "2"}, base...), err: "--prepull_window applies to Kubernetes"},
		{name: "kube_image_affinity without kubeconfig", args: append([]string{"--kube_image_affinity", "no"}, base...), err: "--kube_image_affinity applies to Kubernetes"},
		{name: "bad prepull window", args: append([]string{"--kubeconfig", "k.yaml", "--prepull_window", "-2"}, base...), err: "--prepull_window must be -1 (none) or more"},
		{name: "prepull without affinity", args: append([]string{"--kubeconfig", "k.yaml", "--prepull_window", "2", "--kube_image_affinity", "no"}, base...), err: "--prepull_window needs --kube_image_affinity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), tc.args)
			if tc.err != "" {
				require.Error(t, err)
				var ue *usageError
				require.True(t, errors.As(err, &ue), "want a usage error (exit 2), got %T: %v", err, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, o)
		})
	}
}

func TestParseRunFlagsHelp(t *testing.T) {
	_, err := parseRunFlags(defaultRunOptions(), []string{"-h"})
	assert.ErrorIs(t, err, flag.ErrHelp)
}

// planMode is the mode the library infers for the Config the flags map to.
func planMode(t *testing.T, o runOptions, rows []dataset.Instance) harness.Mode {
	t.Helper()
	cfg := runConfig(o)
	cfg.Dataset, cfg.RewriteReports, cfg.LogDir = rows, true, t.TempDir()
	p, err := swebench.Prepare(context.Background(), cfg)
	require.NoError(t, err)
	return p.Mode
}

// TestFlagsChooseMode: the flags map onto a Config from which the library
// infers the mode the flags ask for.
func TestFlagsChooseMode(t *testing.T) {
	// -p gold: the rows' patches are the predictions.
	withImage := []dataset.Instance{{InstanceID: "a", Image: "x/a:1", Patch: "diff"}, {InstanceID: "b", Image: "x/b:1", Patch: "diff"}}
	mixed := []dataset.Instance{{InstanceID: "a", Image: "x/a:1", Patch: "diff"}, {InstanceID: "b", Patch: "diff"}}
	base := []string{"-p", "gold", "--run_id", "r"}
	type testCase struct {
		name string
		args []string
		rows []dataset.Instance
		want harness.Mode
	}
	cases := []testCase{
		{"default: each row its own mode", nil, mixed, ""},
		{"workspace flag", []string{"--workspace"}, withImage, harness.ModeWorkspace},
		{"rows that all name images", nil, withImage, harness.ModePrebuilt},
		{"no rows", nil, nil, harness.ModeWorkspace},
		{"explicit namespace", []string{"--namespace", "swebench"}, mixed, harness.ModePrebuilt},
		{"explicit tag", []string{"--instance_image_tag", "v2"}, nil, harness.ModePrebuilt},
		{"namespace none builds images", []string{"-n", "none"}, withImage, harness.ModePrebuilt},
		{"namespace none with a tag names local official images", []string{"-n", "none", "--instance_image_tag", "v1"}, mixed, harness.ModePrebuilt},
		{"empty namespace builds images", []string{"--namespace="}, withImage, harness.ModePrebuilt},
		{"namespace none with an image runs there", []string{"-n", "none", "--image", "img"}, withImage, harness.ModeWorkspace},
		{"image flag beats row images", []string{"--image", "img"}, withImage, harness.ModeWorkspace},
		{"repos flag beats row images", []string{"--repos", "/r"}, withImage, harness.ModeWorkspace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), append(tc.args, base...))
			require.NoError(t, err)
			assert.Equal(t, tc.want, planMode(t, o, tc.rows))
		})
	}
}

func TestNormalizeArgs(t *testing.T) {
	type testCase struct {
		name string
		in   []string
		want []string
	}
	cases := []testCase{
		{"nargs plus stops at the next flag", []string{"--instance_ids", "a", "b", "-p", "gold"}, []string{"--instance_ids=a b", "-p", "gold"}},
		{"nargs plus at the end", []string{"-i", "a"}, []string{"-i=a"}},
		{"nargs plus without words", []string{"-i", "--run_id", "r"}, []string{"-i", "--run_id", "r"}},
		{"bool takes a yes/no word", []string{"--rewrite_reports", "True", "x"}, []string{"--rewrite_reports=True", "x"}},
		{"bool leaves other words", []string{"--rewrite_reports", "x"}, []string{"--rewrite_reports", "x"}},
		{"non-bool flag untouched", []string{"--max_workers", "1"}, []string{"--max_workers", "1"}},
		{"after double dash untouched", []string{"--", "-i", "a"}, []string{"--", "-i", "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, normalizeArgs(tc.in))
		})
	}
}

// --lost_retries maps onto Config.LostRetries; 0 means none, which Config
// spells as a negative number (its zero is the default). --instance_timeout
// maps onto Config.InstanceTimeout, 0 leaving the library's default.
func TestRetryFlags(t *testing.T) {
	lost := func(c swebench.Config) any { return c.LostRetries }
	limit := func(c swebench.Config) any { return c.InstanceTimeout }
	type testCase struct {
		name  string
		args  []string
		field func(swebench.Config) any
		want  any
		err   string
	}
	for _, tc := range []testCase{
		{"default", nil, lost, swebench.DefaultLostRetries, ""},
		{"five", []string{"--lost_retries", "5"}, lost, 5, ""},
		{"none", []string{"--lost_retries", "0"}, lost, -1, ""},
		{"negative", []string{"--lost_retries", "-1"}, lost, 0, "--lost_retries must be 0 or more"},
		{"instance timeout default", nil, limit, time.Duration(0), ""},
		{"instance timeout", []string{"--instance_timeout", "900"}, limit, 900 * time.Second, ""},
		{"negative instance timeout", []string{"--instance_timeout", "-5"}, limit, nil, "--instance_timeout must be a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseRunFlags(defaultRunOptions(), append(tc.args, "-p", "gold", "--run_id", "r"))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, tc.field(runConfig(o)))
		})
	}
}
