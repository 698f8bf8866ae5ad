package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
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

// slurmCluster skips (fails in CI) unless the Slurm test cluster
// (scripts/slurm-local.sh) answers.
func slurmCluster(t *testing.T) {
	t.Helper()
	conf := os.Getenv("SWEBOX_TEST_SLURM_CONF")
	if conf == "" {
		cienv.Skip(t, "no Slurm test cluster: scripts/slurm-local.sh up && eval \"$(scripts/slurm-local.sh env)\"")
		return
	}
	t.Setenv("SLURM_CONF", conf)
	out, err := exec.Command("scontrol", "ping").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is UP") {
		cienv.Skip(t, "the Slurm test cluster of %s does not answer: %v: %s", conf, err, out)
	}
	skipWithoutEngine(t)
}

// slurmJobs counts the tasks of run id's jobs in the queue.
func slurmJobs(t *testing.T, runID string) int {
	t.Helper()
	out, err := exec.Command("squeue", "--noheader", "--array", "--name", "swebox-"+runID, "--format", "%i").Output()
	require.NoError(t, err)
	return len(strings.Fields(string(out)))
}

// runContainers counts the containers labelled with run id on the local
// engine, running or not.
func runContainers(t *testing.T, runID string) int {
	t.Helper()
	return countContainers(t, swebench.LabelRun+"="+runID)
}

func countContainers(t *testing.T, label string) int {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+label).Output()
	require.NoError(t, err)
	return len(strings.Fields(string(out)))
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

// slurmDemo holds the exported demo and the verdicts of its run on this
// machine, the reference the Slurm runs must equal.
type slurmDemo struct {
	bin              string
	ds, preds, repos string
	want             grade.RunReport
}

func newSlurmDemo(t *testing.T) slurmDemo {
	t.Helper()
	slurmCluster(t)
	d := slurmDemo{bin: swebenchtest.BuildEval(t)}
	d.ds, d.preds, d.repos = exportDemoT(t)
	runID := "slurm-ref-" + testenv.Session(t)
	dir := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), append(d.runFlags(runID, dir), "--max_workers", "4"), nil, &out, &out)
	require.Equal(t, exitOK, code, out.String())
	d.want = readRunReport(t, filepath.Join(dir, demoModel+"."+runID+".json"))
	// The demo's seven verdicts, as the demo documents them.
	r := buildDemoRepoT(t)
	cases, err := readDemoCases(demoFS(), r.Repo, r.Commits)
	require.NoError(t, err)
	require.Len(t, cases, 7)
	want := map[swebench.Status][]string{}
	for _, c := range cases {
		want[c.Expected] = append(want[c.Expected], c.Instance.InstanceID)
	}
	require.Equal(t, want[swebench.StatusResolved], d.want.ResolvedIDs)
	require.Equal(t, want[swebench.StatusUnresolved], d.want.UnresolvedIDs)
	require.Equal(t, want[swebench.StatusError], d.want.ErrorIDs)
	require.Equal(t, want[swebench.StatusEmptyPatch], d.want.EmptyPatchIDs)
	return d
}

// runFlags are the flags of the demo's run with id runID, writing under dir.
func (d slurmDemo) runFlags(runID, dir string) []string {
	return append([]string{"-d", d.ds, "-p", d.preds, "--repos", d.repos, "--timeout", "20", "--run_id", runID,
		"--log_dir", dir, "--report_dir", dir}, imageArgs()...)
}

// slurmCommand is eval slurm over the test cluster: two shards, each
// taking a whole node (two CPUs).
func (d slurmDemo) slurmCommand(runID, dir string) *exec.Cmd {
	args := append([]string{"slurm", "--shards", "2", "--cpus_per_task", "2", "--poll", "200ms", "--"}, d.runFlags(runID, dir)...)
	return exec.Command(d.bin, append(args, "--max_workers", "2")...)
}

// checkSame asserts that the run report of runID in dir is the reference.
func (d slurmDemo) checkSame(t *testing.T, runID, dir string) {
	t.Helper()
	got := readRunReport(t, filepath.Join(dir, demoModel+"."+runID+".json"))
	assert.Equal(t, d.want, got, "the Slurm run's report differs from the run on one machine")
}

// checkNothingLeft asserts that the run left no job in the queue and no
// container on the engine (a killed eval's containers end with its lease).
func checkNothingLeft(t *testing.T, runID string) {
	t.Helper()
	assert.Zero(t, slurmJobs(t, runID), "jobs of the run are still queued")
	assert.Eventually(t, func() bool { return runContainers(t, runID) == 0 }, 2*time.Minute, time.Second,
		"the run left containers behind")
}

// The demo over two Slurm nodes gives the report of the run on one
// machine, verdict for verdict, and leaves nothing behind.
func TestSlurmDemo(t *testing.T) {
	d := newSlurmDemo(t)
	runID := "slurm-demo-" + testenv.Session(t)
	dir := t.TempDir()
	out, err := d.slurmCommand(runID, dir).CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err)
	d.checkSame(t, runID, dir)
	assert.Regexp(t, `submitted job array \d+: shards 1-2 of 2`, string(out))
	assert.Regexp(t, `shard 1/2 \(job \d+_1\): running on n\d`, string(out))
	assert.Regexp(t, `(?m)^\[6/6\] swebox__demo-\d: `, string(out), "progress numbers the verdicts over the run")
	assert.Contains(t, string(out), "outcomes: 2 resolved, 2 unresolved, 1 patch_failed, 1 timed_out, 1 empty_patch\n")
	checkNothingLeft(t, runID)

	// A rerun finds both shards finished and only merges again.
	out, err = d.slurmCommand(runID, dir).CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err)
	assert.Contains(t, string(out), "shard 1/2: finished in an earlier submission, kept")
	assert.Contains(t, string(out), "shard 2/2: finished in an earlier submission, kept")
	assert.NotContains(t, string(out), "submitted job array")
	d.checkSame(t, runID, dir)
}

// hangingShard waits until the demo's hanging instance (swebox__demo-6,
// 20 s timeout) has its container, and returns the node that runs its
// shard: its evaluation is then certainly in flight.
func hangingShard(t *testing.T, runID string) string {
	t.Helper()
	hanging := swebench.LabelRun + "=" + runID + "," + swebench.LabelInstance + "=swebox__demo-6"
	require.Eventually(t, func() bool {
		out, err := exec.Command("docker", "ps", "-q", "--filter", "label="+swebench.LabelRun+"="+runID,
			"--filter", "label="+swebench.LabelInstance+"=swebox__demo-6").Output()
		return err == nil && len(strings.Fields(string(out))) > 0
	}, 3*time.Minute, 100*time.Millisecond, "the hanging instance never got its container (%s)", hanging)
	// The demo's ids sorted: swebox__demo-6 is the sixth, index 5, so it
	// is in shard 2 of 2.
	ids := []string{"swebox__demo-1", "swebox__demo-2", "swebox__demo-3", "swebox__demo-4", "swebox__demo-5", "swebox__demo-6", "swebox__demo-7"}
	require.Contains(t, swebench.Shard{Index: 2, Count: 2}.Slice(ids), "swebox__demo-6")
	out, err := exec.Command("squeue", "--noheader", "--array", "--name", "swebox-"+runID, "--format", "%K %N").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "2" {
			return f[1]
		}
	}
	t.Fatalf("shard 2 runs on no node: squeue says %q", out)
	return ""
}

// slurmScript runs scripts/slurm-local.sh with args.
func slurmScript(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(moduleDir(t), "scripts", "slurm-local.sh"), args...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "slurm-local.sh %v: %s", args, out)
	t.Logf("slurm-local.sh %v: %s", args, out)
}

func moduleDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// A node that dies in the middle of the run (its slurmd and the shard's
// processes killed, as a machine that loses power) costs no verdict: its
// shard is submitted again, runs on the other node, skips the instances
// it had finished and evaluates the others, and the run's report is the
// one machine's.
func TestSlurmNodeDeath(t *testing.T) {
	d := newSlurmDemo(t)
	runID := "slurm-node-" + testenv.Session(t)
	dir := t.TempDir()
	cmd := d.slurmCommand(runID, dir)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = cmd.Stderr
	require.NoError(t, cmd.Start())
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	}()
	node := hangingShard(t, runID)
	slurmScript(t, "node", "kill", node)
	t.Cleanup(func() { slurmScript(t, "node", "start", node) })
	<-done
	err = cmd.Wait()
	t.Log(log.String())
	require.NoError(t, err)
	d.checkSame(t, runID, dir)
	assert.Regexp(t, `shard 2/2 \(job \d+_2\) ended NODE_FAIL on `+node+` without finishing: submitting it again`, log.String())
	assert.Regexp(t, regexp.MustCompile(`submitted job array \d+: shards 2 of 2`), log.String())
	checkNothingLeft(t, runID)
}

// Ctrl-C cancels the run's jobs (scancel): none is left in the queue and
// no container on the engine; the same command then resumes and gives the
// one machine's report.
func TestSlurmInterrupt(t *testing.T) {
	d := newSlurmDemo(t)
	runID := "slurm-int-" + testenv.Session(t)
	dir := t.TempDir()
	queued := -1
	log, err := interruptAfterVerdict(t, d.slurmCommand(runID, dir), func() {
		hangingShard(t, runID)
		queued = slurmJobs(t, runID)
	})
	t.Log(log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInterrupted, ee.ExitCode())
	assert.Positive(t, queued, "the run's jobs were queued when the signal came")
	assert.Regexp(t, `cancelled job array \d+ \(scancel \d+\)`, log)
	assert.Zero(t, slurmJobs(t, runID), "the interrupted run left jobs in the queue")
	assert.Eventually(t, func() bool { return runContainers(t, runID) == 0 }, time.Minute, time.Second,
		"the interrupted run left containers behind")
	_, err = os.Stat(filepath.Join(dir, demoModel+"."+runID+".json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "an interrupted run writes no merged report")

	out, err := d.slurmCommand(runID, dir).CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err)
	assert.Regexp(t, `\(report\.json from an earlier run\)|finished in an earlier submission, kept`, string(out),
		"the rerun keeps what the first run finished")
	d.checkSame(t, runID, dir)
	checkNothingLeft(t, runID)
}
