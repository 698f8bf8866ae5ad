package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/swebox/swebox/internal/atomicfile"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// slurmOptions are the flags of eval slurm: how the run is cut into shards
// and what each shard's Slurm job asks for. The run's own flags come after
// "--" and go unchanged to every shard.
type slurmOptions struct {
	Shards      int
	Partition   string
	Time        string
	CPUsPerTask int
	Mem         string
	SbatchArgs  []string
	EvalBinary  string
	NodeRetries int
	Poll        time.Duration
}

// slurmUsage is eval slurm -h.
const slurmUsage = `Usage: eval slurm --shards N [SLURM FLAGS] -- RUN FLAGS

Evaluates a run on a Slurm cluster: one job array (sbatch --array=1-N), each task
running 'eval RUN FLAGS --shard I/N' on its node with the node's engine (the run's
--docker_host, else the job's DOCKER_HOST, which sbatch passes on from this shell,
else the node's local socket), then merges the
shards' reports into <report_dir>/<model>.<run_id>.json, the report a run on one
machine writes. --log_dir must be on storage every node shares (instance logs go
to DIR/run_evaluation/<run_id>/, the shards' reports and job logs to
DIR/slurm/<run_id>/), and the run's input files must be readable on the nodes at
the same paths (relative paths resolve against this directory, where the jobs
start). Progress is shown while the jobs run; Ctrl-C cancels them (scancel). A
shard whose job ends without finishing because of its node or the cluster
(NODE_FAIL, BOOT_FAIL, PREEMPTED, TIMEOUT at its --time limit, eval failing
there) is submitted again, up to --node_retries times; the instances it
finished keep their reports and the others run again, never counted as the
model's failures. One cancelled by someone else (CANCELLED), out of its --mem
(OUT_OF_MEMORY) or past its deadline (DEADLINE) is not: the run fails naming
it. Rerunning the same command resumes: finished shards are not submitted
again, and a shard skips the instances that have a report.

Slurm flags:
`

// parseSlurmFlags reads eval slurm's own flags up to "--" and returns the
// run's flags after it.
func parseSlurmFlags(args []string, stdout io.Writer) (slurmOptions, []string, error) {
	so := slurmOptions{NodeRetries: 2, Poll: 2 * time.Second}
	fs := flag.NewFlagSet("eval slurm", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&so.Shards, "shards", 0, "number of shards, the tasks of the job array; required")
	fs.StringVar(&so.Partition, "partition", "", "partition of the jobs (sbatch --partition); default the cluster's")
	fs.StringVar(&so.Time, "time", "", "time limit of each shard's job (sbatch --time, e.g. 2:00:00); default the partition's")
	fs.IntVar(&so.CPUsPerTask, "cpus_per_task", 0, "CPUs of each shard's job (sbatch --cpus-per-task); default Slurm's (1)")
	fs.StringVar(&so.Mem, "mem", "", "memory of each shard's job (sbatch --mem, e.g. 16G); default the partition's")
	fs.Func("sbatch_arg", "another sbatch option for every job, e.g. --sbatch_arg=--account=lab; repeatable", func(v string) error {
		so.SbatchArgs = append(so.SbatchArgs, v)
		return nil
	})
	fs.StringVar(&so.EvalBinary, "eval_binary", "", "the eval program the nodes run, on storage they share; default a copy of this one in DIR/slurm/<run_id>/")
	fs.IntVar(&so.NodeRetries, "node_retries", so.NodeRetries, "times a shard whose job ended unfinished for its node's or the cluster's sake (node failure, preemption, time limit, eval's failure on the node) is submitted again")
	fs.DurationVar(&so.Poll, "poll", so.Poll, "how often the queue and the shards' logs are read")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), slurmUsage)
		fs.PrintDefaults()
	}
	own, runArgs := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			own, runArgs = args[:i], args[i+1:]
			break
		}
	}
	if err := fs.Parse(own); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
		}
		return so, nil, err
	}
	switch {
	case fs.NArg() > 0:
		return so, nil, fmt.Errorf("unexpected argument %q: the run's flags come after --", fs.Arg(0))
	case runArgs == nil:
		return so, nil, errors.New("no run flags: give them after --, e.g. eval slurm --shards 4 -- -d DATASET -p PREDS --run_id ID --log_dir /shared/logs")
	case so.Shards < 1:
		return so, nil, errors.New("--shards N is required (N >= 1)")
	case so.NodeRetries < 0:
		return so, nil, fmt.Errorf("--node_retries must be 0 or more, got %d", so.NodeRetries)
	case so.Poll <= 0:
		return so, nil, fmt.Errorf("--poll must be positive, got %s", so.Poll)
	case so.CPUsPerTask < 0:
		return so, nil, fmt.Errorf("--cpus_per_task must be positive, got %d", so.CPUsPerTask)
	}
	return so, runArgs, nil
}

// slurmRun is one run over the cluster: where its files are and what was
// submitted.
type slurmRun struct {
	so      slurmOptions
	o       runOptions
	words   []string // the run's flags, as given
	cwd     string
	logDir  string // absolute --log_dir
	dir     string // logDir/slurm/<run_id>
	bin     string // the eval the nodes run
	stderr  io.Writer
	relay   *shardRelay
	retries map[int]int
}

// runSlurm is eval slurm.
func runSlurm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	so, runArgs, err := parseSlurmFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "eval slurm: %v\nRun 'eval slurm -h' for the flags.\n", err)
		return exitUsage
	}
	o, err := parseRunFlags(defaultRunOptions(), runArgs)
	if err == nil {
		err = checkSlurmRun(o)
	}
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "eval slurm: %v\nRun '%s' for the Slurm flags and '%s' for the run's.\n", err, commandLine("slurm", "-h"), commandLine("--help"))
		return exitUsage
	}
	r, err := newSlurmRun(so, o, runArgs, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "eval slurm: %v\n", err)
		return exitFailure
	}
	sandboxNoun.Store("the run's Slurm jobs (scancel)")
	return r.run(ctx, stdout)
}

// checkSlurmRun refuses run flags that eval slurm sets itself or that
// cannot hold on a cluster's nodes.
func checkSlurmRun(o runOptions) error {
	switch {
	case o.set["shard"]:
		return usagef("--shard: eval slurm cuts the run into --shards N itself")
	case o.Kube():
		return usagef("--kubeconfig: a Kubernetes cluster schedules its pods itself; run eval without slurm")
	case o.RewriteReports:
		return usagef("--rewrite_reports grades the logs on this machine; run eval without slurm")
	}
	return nil
}

func newSlurmRun(so slurmOptions, o runOptions, words []string, stderr io.Writer) (*slurmRun, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	r := &slurmRun{so: so, o: o, words: words, cwd: cwd, logDir: abs(o.LogDir), stderr: stderr, retries: map[int]int{}}
	r.o.ReportDir = abs(o.ReportDir)
	r.dir = filepath.Join(r.logDir, "slurm", filepath.Base(filepath.Clean("/"+o.RunID)))
	r.relay = newShardRelay(stderr)
	// Bad input stops the run here, before any job is queued: the same
	// checks each shard makes first.
	if o.TaskRepo == "" {
		if _, err := loadRows(context.Background(), o.DatasetName, o.Split, o.DatasetConfig, stderr); err != nil {
			return nil, err
		}
	}
	if o.PredictionsPath != "gold" {
		if _, err := loadPredictions(abs(o.PredictionsPath)); err != nil {
			return nil, err
		}
	}
	for _, c := range []string{"sbatch", "squeue", "scancel", "scontrol"} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("%s is not on PATH: eval slurm runs on a machine that submits Slurm jobs (a login node)", c)
		}
	}
	for i := 1; i <= so.Shards; i++ {
		if err := os.MkdirAll(r.shardDir(i), 0o755); err != nil {
			return nil, err
		}
	}
	if r.bin, err = r.evalBinary(); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(r.script(), []byte(slurmJobScript), 0o755); err != nil {
		return nil, err
	}
	return r, nil
}

// slurmJobScript runs one shard on its node: eval with the run's flags and
// its --shard, then, when eval completed the shard (exit status 0), the
// marker that tells the submitter and later reruns that it is done.
// Slurm signals every process of the job on scancel (eval removes its
// containers on SIGTERM); a job that dies leaves no marker.
const slurmJobScript = `#!/bin/bash
# Written by eval slurm: shard $SLURM_ARRAY_TASK_ID of SHARDS.
# Arguments: SHARDS DIR LOG_DIR EVAL RUN_FLAGS...
shards=$1 dir=$2 logdir=$3 bin=$4
shift 4
i=$SLURM_ARRAY_TASK_ID
out=$dir/shard-$i-of-$shards
rm -f "$out/done"
echo "eval slurm: shard $i/$shards on node ${SLURMD_NODENAME:-?} (job ${SLURM_JOB_ID:-?})" >&2
"$bin" "$@" --shard "$i/$shards" --report_dir "$out" --log_dir "$logdir"
status=$?
if [ "$status" = 0 ]; then
  echo 0 >"$out/done"
fi
exit "$status"
`

func (r *slurmRun) script() string { return filepath.Join(r.dir, "job.sh") }
func (r *slurmRun) shardDir(i int) string {
	return filepath.Join(r.dir, fmt.Sprintf("shard-%d-of-%d", i, r.so.Shards))
}
func (r *slurmRun) shardDone(i int) bool { return fileExists(filepath.Join(r.shardDir(i), "done")) }
func (r *slurmRun) jobFile() string      { return filepath.Join(r.dir, "job") }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// evalBinary returns the program the nodes run: --eval_binary, or this one
// copied next to the run's shards, so that the nodes run the same program
// whatever happens to this one's file meanwhile.
func (r *slurmRun) evalBinary() (string, error) {
	if r.so.EvalBinary != "" {
		p, err := filepath.Abs(r.so.EvalBinary)
		if err != nil {
			return "", err
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("--eval_binary %s: not an executable file", r.so.EvalBinary)
		}
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this program to copy for the nodes: %w (give --eval_binary)", err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return "", fmt.Errorf("read this program to copy for the nodes: %w (give --eval_binary)", err)
	}
	dst := filepath.Join(r.dir, "eval")
	if err := atomicfile.WriteFile(dst, data, 0o755); err != nil {
		return "", err
	}
	return dst, nil
}

// run submits the unfinished shards, follows them until none is in the
// queue, submits again those that ended unfinished, and merges.
func (r *slurmRun) run(ctx context.Context, stdout io.Writer) int {
	w := r.stderr
	if id := r.queuedEarlier(ctx); id != "" {
		fmt.Fprintf(w, "eval slurm: job %s of run %s, submitted earlier, is still in the queue; wait for it to end or cancel it (scancel %s), then rerun\n", id, r.o.RunID, id)
		return exitFailure
	}
	var todo []int
	for i := 1; i <= r.so.Shards; i++ {
		if r.shardDone(i) {
			fmt.Fprintf(w, "shard %d/%d: finished in an earlier submission, kept\n", i, r.so.Shards)
			continue
		}
		todo = append(todo, i)
	}
	unfinished := 0 // shards left unfinished, not to be submitted again
	for len(todo) > 0 {
		jobID, err := r.submit(ctx, todo)
		if err != nil {
			fmt.Fprintf(w, "eval slurm: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(w, "submitted job array %s: shards %s of %d (logs in %s)\n", jobID, arrayList(todo), r.so.Shards, r.dir)
		if !r.follow(ctx, jobID, todo) {
			return r.cancel(jobID)
		}
		r.relay.poll(r.logGlobs(jobID, todo)) // what was written last
		ends := r.finalStates(jobID)
		var again []int
		for _, i := range todo {
			if r.shardDone(i) {
				continue
			}
			end := ends[i]
			if ok, why := end.resubmit(); !ok {
				fmt.Fprintf(w, "eval slurm: shard %d/%d (job %s_%d) ended %s without finishing, not submitted again: %s; its log: %s\n",
					i, r.so.Shards, jobID, i, end, why, r.jobLog(jobID, i))
				unfinished++
				continue
			}
			if r.retries[i] >= r.so.NodeRetries {
				fmt.Fprintf(w, "eval slurm: shard %d/%d (job %s_%d) ended %s without finishing, after %d submissions (--node_retries %d); its log: %s\n",
					i, r.so.Shards, jobID, i, end, r.retries[i]+1, r.so.NodeRetries, r.jobLog(jobID, i))
				if end.State == "TIMEOUT" {
					limit := "the partition's time limit"
					if r.so.Time != "" {
						limit = "their time limit, --time " + r.so.Time
					}
					fmt.Fprintf(w, "Each of its jobs reached %s: give a longer --time, or more --shards.\n", limit)
				}
				unfinished++
				continue
			}
			r.retries[i]++
			fmt.Fprintf(w, "shard %d/%d (job %s_%d) ended %s without finishing: submitting it again (%d of %d); the instances it finished keep their reports, the others run again\n",
				i, r.so.Shards, jobID, i, end, r.retries[i], r.so.NodeRetries)
			again = append(again, i)
		}
		todo = again
	}
	if unfinished > 0 {
		fmt.Fprintf(w, "Rerun to resume; it submits the unfinished shards again:\n  %s\n", r.resumeCommand())
		return exitFailure
	}
	return r.merge(stdout)
}

// logGlobs are the logs of job array id's tasks (a shard's logs of
// earlier submissions were relayed by the process that made them).
func (r *slurmRun) logGlobs(id string, shards []int) []shardLog {
	out := make([]shardLog, len(shards))
	for k, i := range shards {
		out[k] = shardLog{shard: i, glob: r.jobLog(id, i)}
	}
	return out
}

// jobLog is the log of shard i's task of job array id.
func (r *slurmRun) jobLog(id string, i int) string {
	return filepath.Join(r.shardDir(i), "eval-"+id+".log")
}

func (r *slurmRun) resumeCommand() string {
	return commandLine(append([]string{"slurm"}, r.ownWords()...)...)
}

// ownWords are eval slurm's words after the verb: its flags, "--", the
// run's flags.
func (r *slurmRun) ownWords() []string {
	var w []string
	w = append(w, "--shards", strconv.Itoa(r.so.Shards))
	add := func(name, v string) {
		if v != "" {
			w = append(w, name, v)
		}
	}
	add("--partition", r.so.Partition)
	add("--time", r.so.Time)
	if r.so.CPUsPerTask > 0 {
		add("--cpus_per_task", strconv.Itoa(r.so.CPUsPerTask))
	}
	add("--mem", r.so.Mem)
	for _, a := range r.so.SbatchArgs {
		w = append(w, "--sbatch_arg="+a)
	}
	add("--eval_binary", r.so.EvalBinary)
	w = append(w, "--")
	return append(w, r.words...)
}

// sbatchArgs are the options of the job array of the given shards.
func (r *slurmRun) sbatchArgs(shards []int) []string {
	a := []string{"--parsable", "--job-name", "swebox-" + r.o.RunID, "--array", arrayList(shards),
		"--chdir", r.cwd, "--no-requeue",
		"--output", filepath.Join(r.dir, fmt.Sprintf("shard-%%a-of-%d", r.so.Shards), "eval-%A.log")}
	if r.so.Partition != "" {
		a = append(a, "--partition", r.so.Partition)
	}
	if r.so.Time != "" {
		a = append(a, "--time", r.so.Time)
	}
	if r.so.CPUsPerTask > 0 {
		a = append(a, "--cpus-per-task", strconv.Itoa(r.so.CPUsPerTask))
	}
	if r.so.Mem != "" {
		a = append(a, "--mem", r.so.Mem)
	}
	a = append(a, r.so.SbatchArgs...)
	a = append(a, r.script(), strconv.Itoa(r.so.Shards), r.dir, r.logDir, r.bin)
	return append(a, r.words...)
}

func (r *slurmRun) submit(ctx context.Context, shards []int) (string, error) {
	out, err := slurmCommand(ctx, "sbatch", r.sbatchArgs(shards)...)
	if err != nil {
		return "", err
	}
	// --parsable prints "jobid" or "jobid;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job id", out)
	}
	if err := atomicfile.WriteFile(r.jobFile(), []byte(id+"\n"), 0o644); err != nil {
		return "", err
	}
	return id, nil
}

// queuedEarlier returns the job of an earlier submission of this run if
// it is still in the queue: submitting the same shards again would run
// them twice at once.
func (r *slurmRun) queuedEarlier(ctx context.Context) string {
	b, err := os.ReadFile(r.jobFile())
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	tasks, err := r.queue(ctx, id)
	if err != nil || len(tasks) == 0 {
		return ""
	}
	return id
}

// slurmCommand runs a Slurm client command and returns its output; its
// error carries the command's own message.
func slurmCommand(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// queueTask is one array task in squeue.
type queueTask struct {
	Shard  int
	State  string // PENDING, RUNNING, ...
	Node   string
	Reason string
}

// queue lists the tasks of job array id still in the queue.
func (r *slurmRun) queue(ctx context.Context, id string) ([]queueTask, error) {
	out, err := slurmCommand(ctx, "squeue", "--noheader", "--array", "--jobs", id, "--format", "%K|%T|%N|%r")
	if err != nil {
		// squeue refuses a job id that has left the controller's memory.
		if strings.Contains(err.Error(), "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	return parseQueue(out), nil
}

// parseQueue reads squeue --array --format '%K|%T|%N|%r'. A pending array
// whose tasks are not split yet shows one line with a range ("1-4" or
// "2,4"): each task of it is pending.
func parseQueue(out string) []queueTask {
	var tasks []queueTask
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 {
			continue
		}
		for _, i := range expandArray(f[0]) {
			tasks = append(tasks, queueTask{Shard: i, State: f[1], Node: f[2], Reason: f[3]})
		}
	}
	return tasks
}

// expandArray reads an array index expression: "3", "1-4", "[1-2,5]",
// "2,4%2".
func expandArray(s string) []int {
	s = strings.Trim(s, "[]")
	s, _, _ = strings.Cut(s, "%")
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			continue
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil {
				continue
			}
		}
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
	}
	return out
}

// arrayList is sbatch --array's list of the shards, e.g. "1-4" or "2,4".
func arrayList(shards []int) string {
	s := append([]int(nil), shards...)
	sort.Ints(s)
	var parts []string
	for k := 0; k < len(s); {
		j := k
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > k {
			parts = append(parts, fmt.Sprintf("%d-%d", s[k], s[j]))
		} else {
			parts = append(parts, strconv.Itoa(s[k]))
		}
		k = j + 1
	}
	return strings.Join(parts, ",")
}

// follow polls the queue and the shards' logs until no task of job id is
// queued, printing each shard's state as it changes and each instance's
// verdict as a shard writes it. It returns false when ctx ended first.
func (r *slurmRun) follow(ctx context.Context, id string, shards []int) bool {
	w := r.stderr
	last := map[int]string{}
	failures := 0
	tick := time.NewTicker(r.so.Poll)
	defer tick.Stop()
	for {
		tasks, err := r.queue(ctx, id)
		if ctx.Err() != nil {
			return false
		}
		switch {
		case err != nil:
			failures++
			if failures == 1 || failures%30 == 0 {
				fmt.Fprintf(w, "eval slurm: reading the queue: %v (retrying)\n", err)
			}
		default:
			failures = 0
			for _, t := range tasks {
				s := strings.ToLower(t.State)
				switch {
				case t.State == "RUNNING" && t.Node != "":
					s += " on " + t.Node
				case t.State == "PENDING" && t.Reason != "" && t.Reason != "None":
					s += " (" + t.Reason + ")"
				}
				if last[t.Shard] != s {
					last[t.Shard] = s
					fmt.Fprintf(w, "shard %d/%d (job %s_%d): %s\n", t.Shard, r.so.Shards, id, t.Shard, s)
				}
			}
		}
		r.relay.poll(r.logGlobs(id, shards))
		if err == nil && len(tasks) == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// cancel ends the job array after an interrupt and waits until its tasks
// have left the queue (Slurm signals their processes; eval removes its
// containers and keeps finished reports).
func (r *slurmRun) cancel(id string) int {
	w := r.stderr
	ctx, done := context.WithTimeout(context.Background(), 3*time.Minute)
	defer done()
	if _, err := slurmCommand(ctx, "scancel", id); err != nil {
		fmt.Fprintf(w, "eval slurm: %v; cancel the jobs yourself: scancel %s\n", err, id)
		return exitInterrupted
	}
	for ctx.Err() == nil {
		tasks, err := r.queue(ctx, id)
		if err == nil && len(tasks) == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(w, "eval slurm: job %s is still in the queue after scancel %s; see squeue --jobs %s\n", id, id, id)
	}
	fmt.Fprintf(w, "eval slurm: interrupted; cancelled job array %s (scancel %s); finished reports are kept. To resume:\n  %s\n", id, id, r.resumeCommand())
	return exitInterrupted
}

// jobEnd is how an array task ended, as the controller remembers it.
type jobEnd struct {
	State string // JobState: TIMEOUT, NODE_FAIL, ...; "" when unknown
	Exit  string // ExitCode, "status:signal"
	Node  string
}

// String reads e.g. "NODE_FAIL on n2" or "FAILED (exit 1:0) on n1".
func (e jobEnd) String() string {
	if e.State == "" {
		return "in an unknown state"
	}
	s := e.State
	if e.Exit != "" && e.Exit != "0:0" {
		s += " (exit " + e.Exit + ")"
	}
	if e.Node != "" && e.Node != "(null)" {
		s += " on " + e.Node
	}
	return s
}

// resubmit tells whether a shard whose job ended so, unfinished, is
// submitted again, and why not when it is not. A resubmitted shard never
// costs a verdict: it skips the instances that have a report and runs the
// others, which its job stopped before they finished. So it is submitted
// again whenever the end was the node's or the cluster's doing and another
// job may well finish it:
//
//   - NODE_FAIL, BOOT_FAIL: its node died or never came up; the next job
//     may land on another.
//   - TIMEOUT: it reached its time limit (--time); the next job starts
//     where this one stopped, so each gets further, until --node_retries
//     is spent (the advice then is a longer --time or more shards).
//   - PREEMPTED: a job of higher priority took its node (--no-requeue
//     keeps Slurm from requeueing it itself).
//   - FAILED: eval exited non-zero, which (exit 1) is the node's engine,
//     images or files failing, or a signal that killed it (an OOM killer
//     outside the job, a reboot); either may be that node's alone.
//   - an unknown state (the controller has forgotten the job, or scontrol
//     failed) or any other: nothing says another job would end the same.
//
// It is not submitted again, and the run fails naming it, when someone
// meant it to end or another job would end the same way:
//
//   - CANCELLED: someone cancelled it (scancel, an administrator); eval
//     slurm's own scancel after an interrupt never gets here. Submitting
//     it again would undo their decision.
//   - OUT_OF_MEMORY: eval outgrew the job's memory (--mem); the next job
//     has the same.
//   - DEADLINE: the job's --deadline passed; the next one's has too.
//   - FAILED with exit 2: the nodes' eval refused its command line (a
//     different --eval_binary); it refuses it again.
func (e jobEnd) resubmit() (bool, string) {
	switch e.State {
	case "CANCELLED":
		return false, "someone cancelled it (scancel or an administrator), so eval slurm does not submit it against their decision"
	case "OUT_OF_MEMORY":
		return false, "it ran out of the memory its job has (--mem), as the next job would: give a larger --mem"
	case "DEADLINE":
		return false, "it reached its deadline (sbatch --deadline), which the next job would be past too"
	case "FAILED":
		if status, _, _ := strings.Cut(e.Exit, ":"); status == strconv.Itoa(exitUsage) {
			return false, "the nodes' eval refused the run's command line (exit 2), as it would again; see the log"
		}
	}
	return true, ""
}

// finalStates returns how each task of job array id ended, as the
// controller remembers it (scontrol show job).
func (r *slurmRun) finalStates(id string) map[int]jobEnd {
	out, err := slurmCommand(context.Background(), "scontrol", "--oneliner", "show", "job", id)
	if err != nil {
		return map[int]jobEnd{}
	}
	return parseJobStates(out)
}

// parseJobStates reads scontrol --oneliner show job: each array task's
// state, exit code and node.
func parseJobStates(out string) map[int]jobEnd {
	ends := map[int]jobEnd{}
	for _, line := range strings.Split(out, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		i, err := strconv.Atoi(f["ArrayTaskId"])
		if err != nil || f["JobState"] == "" {
			continue
		}
		ends[i] = jobEnd{State: f["JobState"], Exit: f["ExitCode"], Node: f["NodeList"]}
	}
	return ends
}

// merge joins the shards' run reports into the run report and prints the
// summary.
func (r *slurmRun) merge(stdout io.Writer) int {
	w := r.stderr
	var files []string
	for i := 1; i <= r.so.Shards; i++ {
		m, err := filepath.Glob(filepath.Join(r.shardDir(i), "*."+r.o.RunID+".json"))
		if err != nil {
			fmt.Fprintf(w, "eval slurm: %v\n", err)
			return exitFailure
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		fmt.Fprintf(w, "eval slurm: no shard wrote a run report (see the logs in %s)\n", r.dir)
		return exitFailure
	}
	name := filepath.Base(files[0])
	for _, f := range files[1:] {
		if filepath.Base(f) != name {
			fmt.Fprintf(w, "eval slurm: the shards name different runs: %s and %s\n", files[0], f)
			return exitFailure
		}
	}
	merged, err := mergeReportFiles(files)
	if err != nil {
		fmt.Fprintf(w, "eval slurm: %v\n", err)
		return exitFailure
	}
	out := filepath.Join(r.o.ReportDir, name)
	if err := atomicfile.WriteFile(out, merged.Encode(), 0o644); err != nil {
		fmt.Fprintf(w, "eval slurm: %v\n", err)
		return exitFailure
	}
	writeSlurmSummary(stdout, merged)
	fmt.Fprintf(stdout, "run report: %s\n", out)
	fmt.Fprintf(stdout, "logs:       %s\n", filepath.Join(r.logDir, "run_evaluation", r.o.RunID))
	return exitOK
}

// writeSlurmSummary prints the merged run's outcomes: each instance's, and
// the counts as a run on one machine prints them.
func writeSlurmSummary(w io.Writer, rep grade.RunReport) {
	ids := make([]string, 0, len(rep.Outcomes))
	for id := range rep.Outcomes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tOUTCOME")
	count := map[swebench.Outcome]int{}
	for _, id := range ids {
		fmt.Fprintf(tw, "%s\t%s\n", id, rep.Outcomes[id])
		count[swebench.Outcome(rep.Outcomes[id])]++
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d instances: %d resolved, %d unresolved, %d error, %d empty patch",
		rep.TotalInstances, rep.ResolvedInstances, rep.UnresolvedInstances, rep.ErrorInstances, rep.EmptyPatchInstances)
	if n := len(rep.IncompleteIDs); n > 0 {
		fmt.Fprintf(w, ", %d without a prediction", n)
	}
	fmt.Fprintln(w)
	var parts []string
	for _, o := range outcomeOrder {
		if count[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "outcomes: %s\n", strings.Join(parts, ", "))
	}
}

// shardLog is the log pattern of one shard's jobs.
type shardLog struct {
	shard int
	glob  string
}

// shardRelay follows the shards' job logs and prints, once per instance,
// the verdict line a shard's eval wrote, numbered over the whole run as a
// run on one machine numbers them; and the shards' errors and warnings.
type shardRelay struct {
	w       io.Writer
	offsets map[string]int64
	seen    map[string]bool
	// planned is each shard's number of instances to evaluate.
	planned map[int]int
}

var (
	// "[3/4] id: resolved ..." of progress.event.
	verdictLine = regexp.MustCompile(`^\[\d+/\d+\] (\S+): (.*)$`)
	// "4 of 4 selected instances to evaluate, 1 images" of printPlan.
	shardPlanLine = regexp.MustCompile(`^(\d+) of \d+ selected instances to evaluate`)
)

func newShardRelay(w io.Writer) *shardRelay {
	return &shardRelay{w: w, offsets: map[string]int64{}, seen: map[string]bool{}, planned: map[int]int{}}
}

// poll reads what the logs gained since the last poll, complete lines only.
func (s *shardRelay) poll(logs []shardLog) {
	for _, l := range logs {
		files, _ := filepath.Glob(l.glob)
		sort.Strings(files)
		for _, f := range files {
			s.read(l.shard, f)
		}
	}
}

func (s *shardRelay) read(shard int, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(s.offsets[path], io.SeekStart); err != nil {
		return
	}
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return // an incomplete line is read whole at the next poll
		}
		s.offsets[path] += int64(len(line))
		s.line(shard, strings.TrimRight(line, "\r\n"))
	}
}

func (s *shardRelay) line(shard int, line string) {
	if m := shardPlanLine.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		s.planned[shard] = max(s.planned[shard], n)
		return
	}
	if m := verdictLine.FindStringSubmatch(line); m != nil {
		if strings.HasPrefix(m[2], string(swebench.OutcomeCancelled)) {
			return // stopped by a cancel or a dying node: no verdict; the shard's next job evaluates it
		}
		if s.seen[m[1]] {
			return // a resubmitted shard's skip of an instance it finished before
		}
		s.seen[m[1]] = true
		total := 0
		for _, n := range s.planned {
			total += n
		}
		fmt.Fprintf(s.w, "[%d/%d] %s: %s\n", len(s.seen), total, m[1], m[2])
		return
	}
	if strings.Contains(line, "interrupt again to quit at once") || strings.Contains(line, "To resume:") {
		return // eval slurm says how the run stops and resumes
	}
	if strings.HasPrefix(line, "eval: ") || strings.HasPrefix(line, "warning: ") {
		fmt.Fprintf(s.w, "shard %d: %s\n", shard, line)
	}
}
