package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

// demoTimeout bounds each demo instance's tests: one demo prediction loops
// forever, and the demo should not take the official 30 minutes to say so.
const demoTimeout = 20

// demoInputs are the files a demo run reads.
type demoInputs struct {
	Dataset, Predictions string
	Repos                string // local source directory holding swebox__demo.git
	Cases                []demoCase
}

// writeDemoInputs builds the demo repository under dir/repos and writes the
// bundled dataset and predictions into dir.
func writeDemoInputs(dir string) (demoInputs, error) {
	fsys := demoFS()
	r, err := buildDemoRepo(fsys, filepath.Join(dir, "repos"))
	if err != nil {
		return demoInputs{}, err
	}
	cases, err := readDemoCases(fsys, r.Repo, r.Commits)
	if err != nil {
		return demoInputs{}, err
	}
	in := demoInputs{
		Dataset:     filepath.Join(dir, demoDatasetFile),
		Predictions: filepath.Join(dir, demoPredictionsFile),
		Repos:       r.Sources,
		Cases:       cases,
	}
	for name, dst := range map[string]string{demoDatasetFile: in.Dataset, demoPredictionsFile: in.Predictions} {
		b, err := readDemoFile(name)
		if err != nil {
			return demoInputs{}, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return demoInputs{}, fmt.Errorf("write demo input: %w", err)
		}
	}
	return in, nil
}

func readDemoFile(name string) ([]byte, error) {
	b, err := demoEmbed.ReadFile("demo/" + name)
	if err != nil {
		return nil, fmt.Errorf("read demo file: %w", err)
	}
	return b, nil
}

// takeExport removes "--export DIR" (any dash count, or with "=") from
// args.
func takeExport(args []string) (dir string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		name, hasValue := flagName(args[i])
		if name != "export" {
			rest = append(rest, args[i])
			continue
		}
		switch {
		case hasValue:
			_, dir, _ = strings.Cut(args[i], "=")
		case i+1 < len(args):
			i++
			dir = args[i]
		}
		if dir == "" {
			return "", nil, usagef("--export needs a directory")
		}
	}
	return dir, rest, nil
}

// runDemo evaluates the bundled demo: the demo project's repository is built
// in a temporary directory, the default image is built if missing, and each
// verdict is checked against the one the demo expects.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	exportDir, args, err := takeExport(args)
	if err != nil {
		fmt.Fprintf(stderr, "eval demo: %v\n", err)
		return exitUsage
	}
	if exportDir != "" {
		return exportDemo(exportDir, args, stdout, stderr)
	}
	removeStaleDemoDirs(os.TempDir())
	tmp, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", demoDirPrefix, os.Getpid()))
	if err != nil {
		fmt.Fprintf(stderr, "eval demo: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(tmp)
	in, err := writeDemoInputs(tmp)
	if err != nil {
		fmt.Fprintf(stderr, "eval demo: %v\n", err)
		return exitFailure
	}

	o := defaultRunOptions()
	o.DatasetName, o.PredictionsPath = in.Dataset, in.Predictions
	o.Repos = []string{in.Repos}
	o.Timeout = demoTimeout
	o.RunID = "demo-" + time.Now().Format("20060102-150405")
	o.ReportDir = o.LogDir
	o.datasetLabel = "the bundled demo dataset"
	if o, err = parseRunFlags(o, args); err == nil {
		err = o.checkBuilt()
	}
	if err != nil {
		return runFlagsFailure("eval demo", err, stdout, stderr)
	}
	o.words = append([]string{"demo"}, args...)
	if !o.set["report_dir"] && o.set["log_dir"] {
		o.ReportDir = o.LogDir
	}

	w := stderr
	fmt.Fprintf(w, "swebox demo: %d SWE-bench style instances against minicalc, a small Python project whose\n"+
		"git history is built from examples/eval/demo/ (base commits %s).\n",
		len(in.Cases), strings.Join(demoCommitList(in.Cases), ", "))
	for _, c := range in.Cases {
		fmt.Fprintf(w, "  %-16s %s\n", c.Instance.InstanceID, c.Shows)
	}
	fmt.Fprintln(w)

	// The expectations hold for evaluation; --rewrite_reports regrades logs
	// with the official rewrite rules (a timed-out log then counts as
	// unresolved), so it is not checked.
	expected := map[string]swebench.Status{}
	switch {
	case o.RewriteReports:
	case o.PredictionsPath == in.Predictions:
		for _, c := range in.Cases {
			expected[c.Instance.InstanceID] = c.Expected
		}
	case o.PredictionsPath == "gold":
		for _, c := range in.Cases {
			expected[c.Instance.InstanceID] = swebench.StatusResolved
		}
	}
	hooks := &runHooks{
		beforeRun: func(ctx context.Context, clients []*sandbox.Client) error {
			if o.Image != swebench.DefaultImage || o.set["image_map"] {
				return nil // the user chose the images
			}
			if o.Kubeconfig != "" {
				return nil // images are loaded into the nodes by whoever runs the cluster
			}
			for _, c := range clients {
				if err := ensureDefaultImage(ctx, c, o.Image, w); err != nil {
					return err
				}
			}
			return nil
		},
		afterRun: func(res *swebench.Result) int { return checkDemoVerdicts(res, expected, stdout) },
	}
	return evaluate(ctx, o, stdout, w, hooks)
}

func demoCommitList(cases []demoCase) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cases {
		if id := c.Instance.BaseCommit; !seen[id] {
			seen[id] = true
			out = append(out, id[:12])
		}
	}
	return out
}

// checkDemoVerdicts compares the demo's verdicts with the expected ones.
func checkDemoVerdicts(res *swebench.Result, expected map[string]swebench.Status, w io.Writer) int {
	if len(expected) == 0 {
		return exitOK
	}
	got := map[string]swebench.Status{}
	for _, r := range res.Instances {
		got[r.InstanceID] = r.Status
	}
	for _, id := range res.Report.EmptyPatchIDs {
		got[id] = swebench.StatusEmptyPatch
	}
	var wrong []string
	checked := 0
	for id, status := range got { // instances left out by -i or --shard are not checked
		want, ok := expected[id]
		if !ok {
			continue
		}
		checked++
		if status != want {
			wrong = append(wrong, fmt.Sprintf("%s: got %q, want %q", id, status, want))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		fmt.Fprintf(w, "demo: %d verdicts differ from the expected ones:\n  %s\n", len(wrong), strings.Join(wrong, "\n  "))
		return exitFailure
	}
	fmt.Fprintf(w, "demo: all %d verdicts are the expected ones.\n", checked)
	return exitOK
}

// exportDemo writes the demo's inputs to dir, to be run like any dataset
// (the batch scripts' tests do).
func exportDemo(dir string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "eval demo: --export takes no other flags, got %q\n", args[0])
		return exitUsage
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "eval demo: %v\n", err)
		return exitFailure
	}
	if _, err := os.Stat(filepath.Join(dir, "repos")); err == nil {
		fmt.Fprintf(stderr, "eval demo: %s already exists; choose an empty directory\n", filepath.Join(dir, "repos"))
		return exitFailure
	}
	in, err := writeDemoInputs(dir)
	if err != nil {
		fmt.Fprintf(stderr, "eval demo: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote %s, %s and %s\nrun it with:\n  %s\n", in.Dataset, in.Predictions, in.Repos,
		commandLine("-d", in.Dataset, "-p", in.Predictions, "--repos", in.Repos, "--timeout", strconv.Itoa(demoTimeout), "--run_id", "demo"))
	return exitOK
}

// demoDirPrefix begins the name of a demo's temporary directory, followed by
// the pid of the demo that made it.
const demoDirPrefix = "swebox-demo-"

// removeStaleDemoDirs removes the temporary directories of demos that are
// no longer running: a demo interrupted twice exits without removing its
// own, and the next demo removes it.
func removeStaleDemoDirs(root string) {
	matches, _ := filepath.Glob(filepath.Join(root, demoDirPrefix+"*-*"))
	for _, dir := range matches {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(dir), demoDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		_ = fsutil.RemoveAll(dir)
	}
}

// processAlive reports whether a process with pid runs on this machine.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil || errors.Is(p.Signal(syscall.Signal(0)), syscall.EPERM)
}
