package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/grade"
)

func TestSlurmFlags(t *testing.T) {
	type testCase struct {
		name string
		args []string
		want string // part of the error; "" for none
	}
	cases := []testCase{
		{name: "ok", args: []string{"--shards", "2", "--", "-d", "x"}},
		{name: "no shards", args: []string{"--", "-d", "x"}, want: "--shards N is required"},
		{name: "no run flags", args: []string{"--shards", "2"}, want: "no run flags: give them after --"},
		{name: "run flag before --", args: []string{"--shards", "2", "-d", "x"}, want: "flag provided but not defined: -d"},
		{name: "stray word", args: []string{"--shards", "2", "x", "--", "-d", "x"}, want: `unexpected argument "x"`},
		{name: "negative retries", args: []string{"--shards", "2", "--node_retries", "-1", "--"}, want: "--node_retries must be 0 or more"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseSlurmFlags(tc.args, &bytes.Buffer{})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	var out bytes.Buffer
	code := run(context.Background(), []string{"slurm", "--shards", "2", "--", "-p", "gold", "--run_id", "r", "--shard", "1/2"}, nil, &out, &out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out.String(), "--shard: eval slurm cuts the run into --shards N itself")
	assert.Contains(t, out.String(), "slurm -h' for the Slurm flags")
}

func TestSlurmArrays(t *testing.T) {
	assert.Equal(t, "1-4", arrayList([]int{3, 1, 2, 4}))
	assert.Equal(t, "2,4-5,7", arrayList([]int{7, 2, 4, 5}))
	assert.Equal(t, []int{1, 2, 3, 4}, expandArray("1-4"))
	assert.Equal(t, []int{1, 2, 5}, expandArray("[1-2,5]"))
	assert.Equal(t, []int{2, 4}, expandArray("2,4%1"))

	// squeue --array: a pending array not split yet is one line.
	q := parseQueue("1|RUNNING|n1|None\n[2-3]|PENDING||Resources\n")
	assert.Equal(t, []queueTask{{1, "RUNNING", "n1", "None"}, {2, "PENDING", "", "Resources"}, {3, "PENDING", "", "Resources"}}, q)

	// scontrol --oneliner show job, as Slurm 22.05 prints it (fields cut).
	states := parseJobStates("JobId=8 ArrayJobId=7 ArrayTaskId=2 JobName=swebox-r JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0 NodeList=n2 BatchHost=n2\n" +
		"JobId=7 ArrayJobId=7 ArrayTaskId=1 JobName=swebox-r JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=n1\n" +
		"JobId=9 ArrayJobId=7 ArrayTaskId=3 JobName=swebox-r JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=n1\n")
	assert.Equal(t, map[int]string{1: "COMPLETED on n1", 2: "NODE_FAIL on n2", 3: "FAILED (exit 1:0) on n1"}, states)
}

// The relay numbers verdict lines over the run's planned instances, once
// per instance and none for an instance a cancel stopped (a
// resubmitted shard's skip of an instance it finished is not counted
// again), and passes errors and warnings on with their shard.
func TestSlurmRelay(t *testing.T) {
	dir := t.TempDir()
	s1 := filepath.Join(dir, "s1-eval-10.log")
	s2 := filepath.Join(dir, "s2-eval-10.log")
	s2b := filepath.Join(dir, "s2-eval-12.log")
	require.NoError(t, os.WriteFile(s1, []byte("--shard 1/2: 2 of the 3 selected instances\n2 of 2 selected instances to evaluate, 1 images\n[1/2] a: resolved\n[2/2] c: unre"), 0o644))
	require.NoError(t, os.WriteFile(s2, []byte("--shard 2/2: 1 of the 3 selected instances\n1 of 1 selected instances to evaluate, 1 images\nwarning: something\n"), 0o644))
	var out bytes.Buffer
	r := newShardRelay(&out)
	logs := []shardLog{{1, filepath.Join(dir, "s1-*.log")}, {2, filepath.Join(dir, "s2-*.log")}}
	r.poll(logs)
	// The total counts the shards whose plan was read so far.
	assert.Equal(t, "[1/2] a: resolved\nshard 2: warning: something\n", out.String())
	out.Reset()
	f, err := os.OpenFile(s1, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("solved\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(s2b, []byte("--shard 2/2: 1 of the 3 selected instances\n1 of 1 selected instances to evaluate, 1 images\n[1/1] d: cancelled after 2s: stopped by the interrupt before it finished\n[1/1] b: resolved\n[1/1] a: resolved (report.json from an earlier run)\neval: engine lost\n"), 0o644))
	r.poll(logs)
	assert.Equal(t, "[2/3] c: unresolved\n[3/3] b: resolved\nshard 2: eval: engine lost\n", out.String())
}

// readRunReport reads a run report <model>.<run_id>.json.
func readRunReport(t *testing.T, path string) grade.RunReport {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rep grade.RunReport
	require.NoError(t, rep.UnmarshalJSON(data))
	return rep
}

// The shards' run reports merge into the run's report in --report_dir,
// under the name the shards gave theirs; shards naming different runs are
// refused.
func TestSlurmMerge(t *testing.T) {
	dir := t.TempDir()
	r := &slurmRun{so: slurmOptions{Shards: 2}, o: runOptions{RunID: "r1", ReportDir: dir}, dir: filepath.Join(dir, "slurm", "r1"), logDir: dir, stderr: &bytes.Buffer{}}
	shards := []grade.RunReport{
		{TotalInstances: 2, SubmittedInstances: 2, CompletedInstances: 2, ResolvedInstances: 1, UnresolvedInstances: 1,
			CompletedIDs: []string{"a", "c"}, SubmittedIDs: []string{"a", "c"}, ResolvedIDs: []string{"a"}, UnresolvedIDs: []string{"c"},
			Outcomes: map[string]string{"a": "resolved", "c": "unresolved"}},
		{TotalInstances: 1, SubmittedInstances: 1, CompletedInstances: 1, ResolvedInstances: 1,
			CompletedIDs: []string{"b"}, SubmittedIDs: []string{"b"}, ResolvedIDs: []string{"b"},
			Outcomes: map[string]string{"b": "resolved"}},
	}
	for i, rep := range shards {
		require.NoError(t, os.MkdirAll(r.shardDir(i+1), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(r.shardDir(i+1), "m.r1.json"), rep.Encode(), 0o644))
	}
	var out bytes.Buffer
	require.Equal(t, exitOK, r.merge(&out), r.stderr)
	got := readRunReport(t, filepath.Join(dir, "m.r1.json"))
	assert.Equal(t, 3, got.TotalInstances)
	assert.Equal(t, []string{"a", "b"}, got.ResolvedIDs)
	assert.Equal(t, map[string]string{"a": "resolved", "b": "resolved", "c": "unresolved"}, got.Outcomes)
	assert.Contains(t, out.String(), "outcomes: 2 resolved, 1 unresolved\n")

	require.NoError(t, os.Rename(filepath.Join(r.shardDir(2), "m.r1.json"), filepath.Join(r.shardDir(2), "other.r1.json")))
	assert.Equal(t, exitFailure, r.merge(&out))
	assert.Contains(t, r.stderr.(*bytes.Buffer).String(), "the shards name different runs")
}

// Bad input stops eval slurm before anything is queued or written, with
// the file and line at fault.
func TestSlurmBadInput(t *testing.T) {
	ds, preds, _ := exportDemoT(t)
	b, err := os.ReadFile(preds)
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "preds.jsonl")
	first, _, _ := bytes.Cut(b, []byte("\n"))
	require.NoError(t, os.WriteFile(bad, append(append(first, '\n'), []byte("{\"instance_id\": 3}\n")...), 0o644))
	logDir := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), []string{"slurm", "--shards", "2", "--", "-d", ds, "-p", bad, "--run_id", "bad", "--log_dir", logDir}, nil, &out, &out)
	t.Log(out.String())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, out.String(), bad+":2")
	assert.NotContains(t, out.String(), "submitted")
	_, err = os.Stat(filepath.Join(logDir, "slurm"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing of the run was written")
}

// The Slurm flags become the job array's sbatch options; the run's flags
// follow the job script's own arguments unchanged.
func TestSlurmSbatchArgs(t *testing.T) {
	r := &slurmRun{so: slurmOptions{Shards: 4, Partition: "gpu", Time: "2:00:00", CPUsPerTask: 8, Mem: "16G", SbatchArgs: []string{"--account=lab"}},
		o: runOptions{RunID: "r1"}, words: []string{"-d", "lite", "--run_id", "r1"}, cwd: "/home/u", dir: "/shared/logs/slurm/r1", logDir: "/shared/logs", bin: "/shared/logs/slurm/r1/eval"}
	assert.Equal(t, []string{"--parsable", "--job-name", "swebox-r1", "--array", "2,4", "--chdir", "/home/u", "--no-requeue",
		"--output", "/shared/logs/slurm/r1/shard-%a-of-4/eval-%A.log",
		"--partition", "gpu", "--time", "2:00:00", "--cpus-per-task", "8", "--mem", "16G", "--account=lab",
		"/shared/logs/slurm/r1/job.sh", "4", "/shared/logs/slurm/r1", "/shared/logs", "/shared/logs/slurm/r1/eval",
		"-d", "lite", "--run_id", "r1"}, r.sbatchArgs([]int{4, 2}))
	assert.Equal(t, []string{"--shards", "4", "--partition", "gpu", "--time", "2:00:00", "--cpus_per_task", "8", "--mem", "16G",
		"--sbatch_arg=--account=lab", "--", "-d", "lite", "--run_id", "r1"}, r.ownWords())
}
