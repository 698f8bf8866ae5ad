package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/swebox/swebox/internal/atomicfile"
	"github.com/swebox/swebox/internal/engineflags"
	"github.com/swebox/swebox/internal/fsutil"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/spec"
)

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagFailure maps a flag-parsing error to an exit status.
func flagFailure(verb string, err error, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK
	}
	fmt.Fprintf(stderr, "eval %s: %v\nRun 'eval %s -h' for the flags.\n", verb, err, verb)
	return exitUsage
}

// runGrade grades one existing test_output.txt, as the official rewrite
// mode does, and prints its report.json.
func runGrade(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval grade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var datasetName, split, id, logFile, grading, overrides string
	var strict bool
	for _, n := range []string{"dataset_name", "d"} {
		fs.StringVar(&datasetName, n, "", "dataset file (.json/.jsonl) or directory")
	}
	for _, n := range []string{"split", "s"} {
		fs.StringVar(&split, n, "test", "split to read from a dataset directory")
	}
	fs.StringVar(&id, "instance_id", "", "instance whose log this is")
	fs.StringVar(&logFile, "log", "", "the instance's test_output.txt")
	fs.StringVar(&grading, "grading", string(harness.V5), "official release whose parsers and grading rules apply: v4 or v5")
	fs.StringVar(&overrides, "spec_overrides", "", "JSON file adjusting parsers of custom repositories")
	fs.BoolVar(&strict, "strict", false, "strict grading's log rules (markers once each and in order, no graded test both passing and failing, the exit status): the official verdict minus every one a rule refuses, the findings in report.json's swebox.strict (see package swebench/strict)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: eval grade --dataset_name FILE --instance_id ID --log test_output.txt [--grading v4|v5] [--strict]\n\n"+
			"Grades one log as the official rewrite mode (--rewrite_reports) does and prints report.json.\n"+
			"A log without any marker (written by harness 2.x) is graded whole, as it was when published.")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	switch {
	case err != nil:
		return flagFailure("grade", err, fs, stdout, stderr)
	case len(pos) > 0:
		return flagFailure("grade", fmt.Errorf("unexpected argument %q", pos[0]), fs, stdout, stderr)
	case datasetName == "" || id == "" || logFile == "":
		return flagFailure("grade", errors.New("--dataset_name, --instance_id and --log are required"), fs, stdout, stderr)
	case grading != string(harness.V4) && grading != string(harness.V5):
		return flagFailure("grade", fmt.Errorf("--grading must be v4 or v5, got %q", grading), fs, stdout, stderr)
	}
	mode := swebench.GradingOfficial
	if strict {
		mode = swebench.GradingStrict
	}
	report, err := gradeLog(datasetName, split, id, logFile, grading, overrides, mode)
	if err != nil {
		fmt.Fprintf(stderr, "eval grade: %v\n", err)
		return exitFailure
	}
	stdout.Write(report.Encode())
	fmt.Fprintln(stdout)
	fmt.Fprintf(stderr, "%s: %s\n", id, verdict(report))
	if st := report.Notes.Strict; st != nil {
		for _, f := range st.Findings {
			fmt.Fprintf(stderr, "  %s\n", f)
		}
	}
	return exitOK
}

func gradeLog(datasetName, split, id, logFile, grading, overrides string, mode swebench.GradingMode) (grade.InstanceReport, error) {
	rows, err := loadRows(context.Background(), datasetName, split, "", io.Discard)
	if err != nil {
		return grade.InstanceReport{}, err
	}
	var inst *dataset.Instance
	for i := range rows {
		if rows[i].InstanceID == id {
			inst = &rows[i]
		}
	}
	if inst == nil {
		return grade.InstanceReport{}, &dataset.UnknownIDsError{What: "instance", IDs: []string{id}}
	}
	req := swebench.GradeRequest{Instance: *inst, Rules: harness.Rules(grading), GradingMode: mode}
	if overrides != "" {
		if req.Overrides, err = spec.LoadOverrides(overrides); err != nil {
			return grade.InstanceReport{}, err
		}
	}
	if req.Log, err = os.ReadFile(logFile); err != nil {
		return grade.InstanceReport{}, fmt.Errorf("read log: %w", err)
	}
	rep, err := swebench.GradeLog(req)
	if err != nil {
		return grade.InstanceReport{}, fmt.Errorf("%s: %w", logFile, err)
	}
	return rep, nil
}

func verdict(r grade.InstanceReport) string {
	switch {
	case !r.PatchSuccessfullyApplied:
		reason := string(r.Evaluation.Reason)
		if r.Evaluation.Marker != "" {
			reason += " " + r.Evaluation.Marker
		}
		return "unresolved: log unusable (" + reason + ")"
	case r.Resolved:
		return "resolved" + counts(r)
	}
	return "unresolved" + counts(r)
}

func counts(r grade.InstanceReport) string {
	ts := r.TestsStatus
	if ts == nil {
		return ""
	}
	f, p := ts.FailToPass, ts.PassToPass
	return fmt.Sprintf(" (FAIL_TO_PASS %d/%d, PASS_TO_PASS %d/%d)",
		len(f.Success), len(f.Success)+len(f.Failure), len(p.Success), len(p.Success)+len(p.Failure))
}

// runMerge combines the run reports of the shards of one run.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var out string
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&out, n, "", "write the merged report here instead of to standard output")
	}
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: eval merge REPORT... [-o OUT]\n\n"+
			"Combines the run reports (<model>.<run_id>.json) of the shards of one run. Counts are added and\n"+
			"id lists joined; an instance present in two reports is an error (the shards overlap).")
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return flagFailure("merge", err, fs, stdout, stderr)
	}
	if len(files) == 0 {
		return flagFailure("merge", errors.New("no report given"), fs, stdout, stderr)
	}
	merged, err := mergeReportFiles(files)
	if err != nil {
		fmt.Fprintf(stderr, "eval merge: %v\n", err)
		return exitFailure
	}
	data := merged.Encode()
	if out == "" {
		stdout.Write(data)
	} else if err := atomicfile.WriteFile(out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "eval merge: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stderr, "merged %d reports: %d instances, %d resolved, %d unresolved, %d error, %d empty patch\n",
		len(files), merged.TotalInstances, merged.ResolvedInstances, merged.UnresolvedInstances, merged.ErrorInstances, merged.EmptyPatchInstances)
	return exitOK
}

func mergeReportFiles(files []string) (grade.RunReport, error) {
	reports := make([]grade.RunReport, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return grade.RunReport{}, fmt.Errorf("read report: %w", err)
		}
		if err := reports[i].UnmarshalJSON(b); err != nil {
			return grade.RunReport{}, fmt.Errorf("read report %s: %w", f, err)
		}
	}
	merged, err := grade.MergeRunReports(reports...)
	var overlap *grade.OverlapError
	if errors.As(err, &overlap) {
		return grade.RunReport{}, fmt.Errorf("%s and %s both hold instance %s: the shards overlap (were they cut with the same --shard N and dataset?)",
			files[overlap.Shards[0]], files[overlap.Shards[1]], overlap.ID)
	}
	return merged, err
}

// runPrune removes containers, volumes and networks left by runs (after a
// crash or a kill -9; a normal or interrupted run removes its own).
func runPrune(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval prune", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var runID string
	var all bool
	for _, n := range []string{"run_id", "id"} {
		fs.StringVar(&runID, n, "", "remove what the run with this id left")
	}
	fs.BoolVar(&all, "all", false, "remove everything swebox labelled, whatever the run (also other users' runs on a shared engine)")
	eng := engineflags.Defaults()
	engineflags.Register(fs, &eng, engineflags.DockerHost.With("engine to clean; repeatable; default DOCKER_HOST"),
		engineflags.Kubeconfig.With("clean the pods of the Kubernetes cluster this kubeconfig file describes instead (a build with -tags "+engineflags.Tag+" only)"),
		engineflags.KubeNamespace.With("with --kubeconfig: the namespace of the pods"))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: eval prune (--run_id ID | --all) [--docker_host HOST]... [--kubeconfig FILE [--kube_namespace NS]]\n\n"+
			"Removes containers, volumes and networks (pods on Kubernetes) labelled by swebox (label "+swebench.LabelRun+"=ID for a run).")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	switch {
	case err != nil:
		return flagFailure("prune", err, fs, stdout, stderr)
	case len(pos) > 0:
		return flagFailure("prune", fmt.Errorf("unexpected argument %q", pos[0]), fs, stdout, stderr)
	case (runID == "") == !all:
		return flagFailure("prune", errors.New("give exactly one of --run_id ID and --all"), fs, stdout, stderr)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := eng.Check(set); err != nil {
		return flagFailure("prune", err, fs, stdout, stderr)
	}
	if err := eng.CheckBuilt("eval", kubeRebuildCommand()); err != nil {
		return flagFailure("prune", err, fs, stdout, stderr)
	}
	req := sandbox.PruneRequest{All: true}
	if runID != "" {
		req.Labels = map[string]string{swebench.LabelRun: runID}
	}
	clients, err := newClients(eng, nil)
	if err != nil {
		fmt.Fprintf(stderr, "eval prune: %v\n", err)
		return exitFailure
	}
	code := exitOK
	for _, c := range clients {
		res, err := c.Prune(ctx, req)
		if eng.Kube() {
			fmt.Fprintf(stdout, "%s: removed %d pods\n", hostName(c), res.Containers)
		} else {
			fmt.Fprintf(stdout, "%s: removed %d containers, %d volumes, %d networks\n", hostName(c), res.Containers, res.Volumes, res.Networks)
		}
		if err != nil {
			fmt.Fprintf(stderr, "eval prune: %s: %v\n", hostName(c), err)
			code = exitFailure
		}
		c.Close()
	}
	if runID != "" && !eng.Kube() {
		// The run's workspaces on this machine: checkouts a double Ctrl-C
		// left behind.
		dir := filepath.Join(swebench.DefaultWorkDir(), filepath.Base(filepath.Clean("/"+runID)))
		if _, err := os.Lstat(dir); err == nil {
			if err := fsutil.RemoveAll(dir); err != nil {
				fmt.Fprintf(stderr, "eval prune: %v\n", err)
				code = exitFailure
			} else {
				fmt.Fprintf(stdout, "removed %s\n", dir)
			}
		}
	}
	return code
}
