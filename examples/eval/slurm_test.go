package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

	// scontrol --oneliner show job, as Slurm 22.05 prints it (fields cut;
	// the TIMEOUT and CANCELLED lines from the test cluster, the first
	// after scontrol update JobId=2_1 EndTime=now+2).
	ends := parseJobStates("JobId=8 ArrayJobId=7 ArrayTaskId=2 JobName=swebox-r JobState=NODE_FAIL Reason=NodeDown ExitCode=0:0 NodeList=n2 BatchHost=n2\n" +
		"JobId=7 ArrayJobId=7 ArrayTaskId=1 JobName=swebox-r JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=n1\n" +
		"JobId=9 ArrayJobId=7 ArrayTaskId=3 JobName=swebox-r JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=n1\n" +
		"JobId=3 ArrayJobId=2 ArrayTaskId=4 JobName=swebox-probe UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:00:17 TimeLimit=00:01:00 NodeList=n1 BatchHost=n1\n" +
		"JobId=2 ArrayJobId=2 ArrayTaskId=5 JobName=swebox-probe UserId=root(0) JobState=CANCELLED Reason=None Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:15 RunTime=00:00:17 TimeLimit=00:05:00 NodeList=n1 BatchHost=n1\n" +
		"JobId=10 ArrayJobId=7 ArrayTaskId=6 JobName=swebox-r JobState=PENDING Reason=Priority ExitCode=0:0 NodeList=(null)\n")
	got := map[int]string{}
	for i, e := range ends {
		got[i] = e.String()
	}
	assert.Equal(t, map[int]string{1: "COMPLETED on n1", 2: "NODE_FAIL on n2", 3: "FAILED (exit 1:0) on n1",
		4: "TIMEOUT (exit 0:15) on n1", 5: "CANCELLED (exit 0:15) on n1", 6: "PENDING"}, got)
	assert.Equal(t, "in an unknown state", ends[7].String(), "a task scontrol does not list")
}

// fakeSlurm puts sbatch, squeue, scontrol and scancel on PATH that play a
// cluster whose jobs have all ended when squeue is first asked: job array
// n (the nth sbatch, job id 100+n) ends as ends[n-1] says, each shard's
// task with the given state, exit code and node, or "COMPLETED", which
// also writes the shard's done marker as the job script does. A shard
// ends[n-1] leaves out is one scontrol no longer knows. It returns the
// file where sbatch records each submission's --array.
func fakeSlurm(t *testing.T, r *slurmRun, ends []map[int]jobEnd) string {
	t.Helper()
	bin := t.TempDir()
	state := t.TempDir()
	for n, m := range ends {
		var show, done strings.Builder
		for i, e := range m {
			fmt.Fprintf(&show, "JobId=%d ArrayJobId=%d ArrayTaskId=%d JobName=swebox-%s JobState=%s Reason=None ExitCode=%s NodeList=%s\n",
				1000*(n+1)+i, 101+n, i, r.o.RunID, e.State, cmp.Or(e.Exit, "0:0"), cmp.Or(e.Node, "n1"))
			if e.State == "COMPLETED" {
				fmt.Fprintln(&done, filepath.Join(r.shardDir(i), "done"))
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(state, fmt.Sprintf("show-%d", 101+n)), []byte(show.String()), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(state, fmt.Sprintf("done-%d", n+1)), []byte(done.String()), 0o644))
	}
	scripts := map[string]string{
		"sbatch": `n=$(( $(cat "$S/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$S/count"
while [ $# -gt 0 ]; do [ "$1" = --array ] && echo "$2" >>"$S/arrays"; shift; done
[ -f "$S/done-$n" ] || { echo "sbatch: error: the test planned no job $n" >&2; exit 1; }
while read -r f; do echo 0 >"$f"; done <"$S/done-$n"
echo $((100 + n))`,
		// Every task has left the queue.
		"squeue": `exit 0`,
		// scontrol --oneliner show job ID
		"scontrol": `[ -f "$S/show-$4" ] && [ -s "$S/show-$4" ] || { echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; }
cat "$S/show-$4"`,
		"scancel": `echo "scancel: the test cancels nothing" >&2; exit 1`,
	}
	for name, body := range scripts {
		script := "#!/bin/bash\n# " + name + " of fakeSlurm (examples/eval/slurm_test.go)\nS=" + state + "\n" + body + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return filepath.Join(state, "arrays")
}

// How a shard's job ended decides whether eval slurm submits it again, as
// jobEnd.resubmit says: a node's or the cluster's doing (a dead or
// unbooted node, preemption, the time limit, eval failing on the node, a
// state nobody knows) is submitted again, up to --node_retries, and costs
// no verdict; someone's cancel, the job's memory or deadline, or a command
// line the nodes' eval refuses is not, and the run fails naming it, with
// no merged report, after the other shards are done. Fault injection: a
// fake sbatch, squeue and scontrol (fakeSlurm) end each job as the case
// says.
func TestSlurmShardEnds(t *testing.T) {
	type testCase struct {
		name    string
		retries int
		ends    []map[int]jobEnd // per submission, shard -> how its task ended
		arrays  []string         // the --array of each submission
		code    int
		want    []string // in the log, in order
		notWant []string
	}
	done := jobEnd{State: "COMPLETED"}
	again := func(i int, end string) string {
		return fmt.Sprintf(`shard %d/2 \(job \d+_%d\) ended %s without finishing: submitting it again`, i, i, regexp.QuoteMeta(end))
	}
	stopped := func(i int, end, why string) string {
		return fmt.Sprintf(`eval slurm: shard %d/2 \(job \d+_%d\) ended %s without finishing, not submitted again: %s`, i, i, regexp.QuoteMeta(end), why)
	}
	const resume = `Rerun to resume; it submits the unfinished shards again:\n  .* slurm --shards 2 --time 30 -- -d x --run_id r1\n`
	cases := []testCase{
		{name: "TIMEOUT", retries: 2,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "TIMEOUT", Exit: "0:15", Node: "n2"}}, {2: done}},
			arrays: []string{"1-2", "2"}, code: exitOK,
			want: []string{`submitted job array 101: shards 1-2 of 2`, again(2, "TIMEOUT (exit 0:15) on n2") + ` \(1 of 2\); the instances it finished keep their reports`,
				`submitted job array 102: shards 2 of 2`}},
		{name: "TIMEOUT each time", retries: 2,
			ends: []map[int]jobEnd{{1: done, 2: {State: "TIMEOUT", Exit: "0:15", Node: "n2"}},
				{2: {State: "TIMEOUT", Exit: "0:15", Node: "n1"}}, {2: {State: "TIMEOUT", Exit: "0:15", Node: "n2"}}},
			arrays: []string{"1-2", "2", "2"}, code: exitFailure,
			want: []string{again(2, "TIMEOUT (exit 0:15) on n2") + ` \(1 of 2\)`, again(2, "TIMEOUT (exit 0:15) on n1") + ` \(2 of 2\)`,
				`eval slurm: shard 2/2 \(job 103_2\) ended TIMEOUT \(exit 0:15\) on n2 without finishing, after 3 submissions \(--node_retries 2\); its log: \S+/shard-2-of-2/eval-103\.log\n`,
				`Each of its jobs reached their time limit, --time 30: give a longer --time, or more --shards\.\n`, resume}},
		{name: "NODE_FAIL", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "NODE_FAIL", Node: "n1"}, 2: done}, {1: done}},
			arrays: []string{"1-2", "1"}, code: exitOK,
			want: []string{again(1, "NODE_FAIL on n1")}},
		{name: "BOOT_FAIL", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "BOOT_FAIL", Node: "n1"}, 2: done}, {1: done}},
			arrays: []string{"1-2", "1"}, code: exitOK,
			want: []string{again(1, "BOOT_FAIL on n1")}},
		{name: "PREEMPTED", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "PREEMPTED", Exit: "0:15", Node: "n1"}, 2: done}, {1: done}},
			arrays: []string{"1-2", "1"}, code: exitOK,
			want: []string{again(1, "PREEMPTED (exit 0:15) on n1")}},
		{name: "FAILED: eval could not complete on the node", retries: 2,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "FAILED", Exit: "1:0", Node: "n2"}}, {2: done}},
			arrays: []string{"1-2", "2"}, code: exitOK,
			want: []string{again(2, "FAILED (exit 1:0) on n2")}},
		{name: "FAILED: eval killed by a signal", retries: 2,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "FAILED", Exit: "0:9", Node: "n2"}}, {2: done}},
			arrays: []string{"1-2", "2"}, code: exitOK,
			want: []string{again(2, "FAILED (exit 0:9) on n2")}},
		{name: "the controller forgot the job", retries: 2,
			ends:   []map[int]jobEnd{{}, {1: done, 2: done}},
			arrays: []string{"1-2", "1-2"}, code: exitOK,
			want: []string{again(1, "in an unknown state"), again(2, "in an unknown state")}},
		{name: "CANCELLED by someone else", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "CANCELLED", Exit: "0:15", Node: "n1"}, 2: done}},
			arrays: []string{"1-2"}, code: exitFailure,
			want: []string{stopped(1, "CANCELLED (exit 0:15) on n1", `someone cancelled it \(scancel or an administrator\), so eval slurm does not submit it against their decision; its log: \S+/shard-1-of-2/eval-101\.log\n`),
				resume},
			notWant: []string{"submitting it again"}},
		{name: "OUT_OF_MEMORY", retries: 2,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "OUT_OF_MEMORY", Exit: "0:125", Node: "n2"}}},
			arrays: []string{"1-2"}, code: exitFailure,
			want: []string{stopped(2, "OUT_OF_MEMORY (exit 0:125) on n2", `it ran out of the memory its job has \(--mem\), as the next job would: give a larger --mem`), resume}},
		{name: "DEADLINE", retries: 2,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "DEADLINE", Node: "n2"}}},
			arrays: []string{"1-2"}, code: exitFailure,
			want: []string{stopped(2, "DEADLINE on n2", `it reached its deadline`), resume}},
		{name: "FAILED: the nodes' eval refused the command line", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "FAILED", Exit: "2:0", Node: "n1"}, 2: done}},
			arrays: []string{"1-2"}, code: exitFailure,
			want: []string{stopped(1, "FAILED (exit 2:0) on n1", `the nodes' eval refused the run's command line \(exit 2\)`), resume}},
		{name: "one cancelled, the other resubmitted and finished", retries: 2,
			ends:   []map[int]jobEnd{{1: {State: "CANCELLED", Exit: "0:15", Node: "n1"}, 2: {State: "NODE_FAIL", Node: "n2"}}, {2: done}},
			arrays: []string{"1-2", "2"}, code: exitFailure,
			want: []string{stopped(1, "CANCELLED (exit 0:15) on n1", "someone cancelled it"), again(2, "NODE_FAIL on n2"), `submitted job array 102: shards 2 of 2`, resume}},
		{name: "--node_retries 0", retries: 0,
			ends:   []map[int]jobEnd{{1: done, 2: {State: "NODE_FAIL", Node: "n2"}}},
			arrays: []string{"1-2"}, code: exitFailure,
			want: []string{`shard 2/2 \(job 101_2\) ended NODE_FAIL on n2 without finishing, after 1 submissions \(--node_retries 0\)`, resume}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var log bytes.Buffer
			r := &slurmRun{so: slurmOptions{Shards: 2, Time: "30", NodeRetries: tc.retries, Poll: time.Millisecond},
				o: runOptions{RunID: "r1", ReportDir: dir}, words: []string{"-d", "x", "--run_id", "r1"},
				cwd: dir, logDir: dir, dir: filepath.Join(dir, "slurm", "r1"), bin: "/bin/false",
				stderr: &log, relay: newShardRelay(&log), retries: map[int]int{}}
			// The shards' run reports, which a finished shard's eval writes.
			for i, id := range []string{"a", "b"} {
				rep := grade.RunReport{TotalInstances: 1, SubmittedInstances: 1, CompletedInstances: 1, ResolvedInstances: 1,
					CompletedIDs: []string{id}, SubmittedIDs: []string{id}, ResolvedIDs: []string{id}, Outcomes: map[string]string{id: "resolved"}}
				require.NoError(t, os.MkdirAll(r.shardDir(i+1), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(r.shardDir(i+1), "m.r1.json"), rep.Encode(), 0o644))
			}
			arrays := fakeSlurm(t, r, tc.ends)
			var stdout bytes.Buffer
			code := r.run(context.Background(), &stdout)
			t.Log(log.String())
			assert.Equal(t, tc.code, code)
			submitted, err := os.ReadFile(arrays)
			require.NoError(t, err)
			assert.Equal(t, tc.arrays, strings.Fields(string(submitted)), "the shards submitted, job array by job array")
			assert.Regexp(t, "(?s)"+strings.Join(tc.want, ".*"), log.String())
			for _, s := range tc.notWant {
				assert.NotContains(t, log.String(), s)
			}
			_, err = os.Stat(filepath.Join(dir, "m.r1.json"))
			if tc.code == exitOK {
				assert.NoError(t, err, "the merged report")
				assert.Contains(t, stdout.String(), "outcomes: 2 resolved\n")
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist, "a run with an unfinished shard writes no merged report")
				assert.Empty(t, stdout.String())
			}
		})
	}
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
