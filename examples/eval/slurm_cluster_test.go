//go:build slurm

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// The tests of eval slurm on the Slurm test cluster (scripts/slurm-local.sh
// up; eval "$(scripts/slurm-local.sh env)"):
//
//	go test -tags slurm -run '^TestSlurm' ./examples/eval

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
	return len(engineObjects(t, "", swebench.LabelRun+"="+runID))
}

// engineObjects lists the containers, running or not, and the volumes on
// the engine at host (the docker CLI's default engine when ""), those with
// label when it is given: "container ID" and "volume NAME".
func engineObjects(t *testing.T, host, label string) []string {
	t.Helper()
	docker := func(args ...string) []string {
		if host != "" {
			args = append([]string{"-H", host}, args...)
		}
		if label != "" {
			args = append(args, "--filter", "label="+label)
		}
		out, err := exec.Command("docker", args...).Output()
		require.NoError(t, err, "docker %v", args)
		return strings.Fields(string(out))
	}
	var objs []string
	for _, id := range docker("ps", "-aq", "--no-trunc") {
		objs = append(objs, "container "+id)
	}
	for _, name := range docker("volume", "ls", "-q") {
		objs = append(objs, "volume "+name)
	}
	return objs
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
	slurmReference.Lock()
	defer slurmReference.Unlock()
	if slurmReference.rep != nil {
		d.want = *slurmReference.rep
		return d
	}
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
	slurmReference.rep = &d.want
	return d
}

// slurmReference is the report of the demo's run on one machine, made by
// the first test that needs it: it names no path or time, so every test's
// exported demo has the same one.
var slurmReference struct {
	sync.Mutex
	rep *grade.RunReport
}

// runFlags are the flags of the demo's run with id runID, writing under dir.
func (d slurmDemo) runFlags(runID, dir string) []string {
	return append([]string{"-d", d.ds, "-p", d.preds, "--repos", d.repos, "--timeout", "20", "--run_id", runID,
		"--log_dir", dir, "--report_dir", dir}, imageArgs()...)
}

// slurmCommand is eval slurm over the test cluster: two shards, each
// taking a whole node (two CPUs).
func (d slurmDemo) slurmCommand(runID, dir string, slurmFlags ...string) *exec.Cmd {
	args := append(append([]string{"slurm", "--shards", "2", "--cpus_per_task", "2", "--poll", "200ms"}, slurmFlags...), "--")
	args = append(args, d.runFlags(runID, dir)...)
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
	return hangingShardOn(t, "", runID)
}

// hangingShardOn is hangingShard for the nodes' engine at host.
func hangingShardOn(t *testing.T, host, runID string) string {
	t.Helper()
	hanging := swebench.LabelRun + "=" + runID + "," + swebench.LabelInstance + "=swebox__demo-6"
	require.Eventually(t, func() bool {
		args := []string{"ps", "-q", "--filter", "label=" + swebench.LabelRun + "=" + runID,
			"--filter", "label=" + swebench.LabelInstance + "=swebox__demo-6"}
		if host != "" {
			args = append([]string{"-H", host}, args...)
		}
		out, err := exec.Command("docker", args...).Output()
		return err == nil && len(strings.Fields(string(out))) > 0
	}, 3*time.Minute, 100*time.Millisecond, "the hanging instance never got its container on %s (%s)", cmp.Or(host, "the local engine"), hanging)
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

// slurmScript runs scripts/slurm-local.sh with args on the cluster of
// SWEBOX_TEST_SLURM_CONF, whose directory is the script's
// SWEBOX_SLURM_RUN (another cluster on this machine is left alone).
func slurmScript(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(moduleDir(t), "scripts", "slurm-local.sh"), args...)
	cmd.Env = append(os.Environ(), "SWEBOX_SLURM_RUN="+filepath.Dir(os.Getenv("SWEBOX_TEST_SLURM_CONF")))
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
	log, node, err := runKillingNode(t, d.slurmCommand(runID, dir), runID)
	t.Log(log)
	require.NoError(t, err)
	d.checkSame(t, runID, dir)
	assert.Regexp(t, `shard 2/2 \(job \d+_2\) ended NODE_FAIL on `+node+` without finishing: submitting it again`, log)
	assert.Regexp(t, regexp.MustCompile(`submitted job array \d+: shards 2 of 2`), log)
	checkNothingLeft(t, runID)
}

// runKillingNode starts cmd, an eval slurm of the demo, kills the node of
// the hanging instance's shard while that instance runs, and returns the
// command's output, the node and how the command ended. The node is
// started again when the test ends.
func runKillingNode(t *testing.T, cmd *exec.Cmd, runID string) (string, string, error) {
	t.Helper()
	var node string
	log, err := runDuringHang(t, cmd, func() {
		node = hangingShard(t, runID)
		slurmScript(t, "node", "kill", node)
		t.Cleanup(func() { slurmScript(t, "node", "start", node) })
	})
	return log, node, err
}

// runDuringHang starts cmd, an eval slurm of the demo, calls meanwhile
// while it runs, and returns the command's output and how it ended. When
// meanwhile fails the test, the command is interrupted, which cancels its
// jobs.
func runDuringHang(t *testing.T, cmd *exec.Cmd, meanwhile func()) (string, error) {
	t.Helper()
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
	ended := false
	defer func() {
		if !ended {
			_ = cmd.Process.Signal(os.Interrupt)
			<-done
			_ = cmd.Wait()
		}
	}()
	meanwhile()
	<-done
	err = cmd.Wait()
	ended = true
	return log.String(), err
}

// A shard whose job reaches its time limit (TIMEOUT) costs no verdict, as
// a dead node's does: it is submitted again and the run's report is the
// one machine's. While the hanging instance runs, its shard's job has its
// processes stopped (scancel --signal=STOP: the job stays RUNNING and its
// time counts), so that it outlasts any limit however fast the machine,
// and its end moved to a few seconds from now (scontrol update EndTime,
// the time limit to the second; --time counts whole minutes). The
// controller then ends it as at any time limit, at its next check (every
// 30 s): SIGCONT, SIGTERM, state TIMEOUT.
func TestSlurmTimeLimit(t *testing.T) {
	d := newSlurmDemo(t)
	runID := "slurm-time-" + testenv.Session(t)
	dir := t.TempDir()
	var node string
	log, err := runDuringHang(t, d.slurmCommand(runID, dir, "--time", "5"), func() {
		node = hangingShard(t, runID)
		job := shardJob(t, runID, 2)
		out, err := exec.Command("scancel", "--signal=STOP", "--full", job).CombinedOutput()
		require.NoError(t, err, "scancel --signal=STOP: %s", out)
		out, err = exec.Command("scontrol", "update", "JobId="+job, "EndTime=now+5").CombinedOutput()
		require.NoError(t, err, "scontrol update EndTime: %s", out)
	})
	t.Log(log)
	require.NoError(t, err)
	d.checkSame(t, runID, dir)
	assert.Regexp(t, `shard 2/2 \(job \d+_2\) ended TIMEOUT( \(exit [^)]*\))? on `+node+` without finishing: submitting it again \(1 of 2\)`, log)
	assert.Regexp(t, `submitted job array \d+: shards 2 of 2`, log)
	checkNothingLeft(t, runID)
}

// shardJob returns the id of run id's queued task of shard i, as
// ARRAYJOB_I: the task's own job id may be the array's (the first task
// started gets it), which scancel and scontrol take for every task.
func shardJob(t *testing.T, runID string, i int) string {
	t.Helper()
	out, err := exec.Command("squeue", "--noheader", "--array", "--name", "swebox-"+runID, "--format", "%K %i").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == strconv.Itoa(i) {
			return f[1]
		}
	}
	t.Fatalf("shard %d of run %s is not in the queue: squeue says %q", i, runID, out)
	return ""
}

// With --node_retries 0 a shard whose node died is not submitted again:
// the run fails (exit 1) naming the shard, its state and its log, merges
// nothing, and says how to resume; the same command then resumes on the
// node left and gives the one machine's report.
func TestSlurmNodeRetriesSpent(t *testing.T) {
	d := newSlurmDemo(t)
	runID := "slurm-spent-" + testenv.Session(t)
	dir := t.TempDir()
	log, node, err := runKillingNode(t, d.slurmCommand(runID, dir, "--node_retries", "0"), runID)
	t.Log(log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitFailure, ee.ExitCode())
	assert.Regexp(t, `shard 2/2 \(job \d+_2\) ended NODE_FAIL on `+node+` without finishing, after 1 submissions \(--node_retries 0\); its log: \S+/shard-2-of-2/eval-\d+\.log`, log)
	assert.Contains(t, log, "Rerun to resume; it submits the unfinished shards again:\n")
	_, err = os.Stat(filepath.Join(dir, demoModel+"."+runID+".json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a run with an unfinished shard writes no merged report")

	out, err := d.slurmCommand(runID, dir, "--node_retries", "0").CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err)
	assert.Contains(t, string(out), "shard 1/2: finished in an earlier submission, kept")
	assert.Regexp(t, `submitted job array \d+: shards 2 of 2`, string(out))
	d.checkSame(t, runID, dir)
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

// The nodes' engine may be Podman: the demo over the Slurm cluster with
// the run's --docker_host on rootful Podman's Docker-compatible API
// (scripts/podman-local.sh up; SWEBOX_PODMAN_ROOTFUL_HOST, as its env
// prints) evaluates each instance in a Podman container, gives the one
// machine's report, and leaves on that engine no container or volume that
// was not there before; the run puts nothing on the local Docker engine.
// .ci/run runs it in its Podman block.
func TestSlurmPodman(t *testing.T) {
	host := os.Getenv("SWEBOX_PODMAN_ROOTFUL_HOST")
	if host == "" {
		cienv.Skip(t, "no rootful Podman: scripts/podman-local.sh up && eval \"$(scripts/podman-local.sh env)\"")
		return
	}
	d := newSlurmDemo(t)
	runID := "slurm-podman-" + testenv.Session(t)
	dir := t.TempDir()
	before := engineObjects(t, host, "")
	cmd := d.slurmCommand(runID, dir)
	cmd.Args = append(cmd.Args, "--docker_host", host)
	var onDocker []string
	log, err := runDuringHang(t, cmd, func() {
		hangingShardOn(t, host, runID)
		onDocker = engineObjects(t, "", swebench.LabelRun+"="+runID)
	})
	t.Log(log)
	require.NoError(t, err)
	d.checkSame(t, runID, dir)
	assert.Empty(t, onDocker, "the run made containers on the local Docker engine while its hanging instance ran on Podman")
	assert.Zero(t, slurmJobs(t, runID), "jobs of the run are still queued")
	assert.Empty(t, engineObjects(t, "", swebench.LabelRun+"="+runID), "the run left containers on the local Docker engine")
	assert.Eventually(t, func() bool {
		return len(engineObjects(t, host, swebench.LabelRun+"="+runID)) == 0
	}, 2*time.Minute, time.Second, "the run left containers or volumes on Podman")
	assert.Subset(t, before, engineObjects(t, host, ""), "the run left containers or volumes on Podman")
}
