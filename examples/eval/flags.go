package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/swebox/swebox/internal/engineflags"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/harness"
)

// runOptions are the flags of a run: the official run_evaluation's, with the
// same names, meaning and defaults, and swebox's own in the same style.
type runOptions struct {
	DatasetName      string
	DatasetConfig    string
	Split            string
	PredictionsPath  string
	InstanceIDs      []string
	MaxWorkers       int
	Timeout          int // seconds, as the official --timeout
	RunID            string
	ReportDir        string
	RewriteReports   bool
	RetryFailures    bool
	Repeat           int
	LostRetries      int
	InstanceTimeout  int // seconds; 0: the library's default
	Namespace        string
	InstanceImageTag string

	Repos         []string
	TaskRepo      string
	Image         string
	ImageMap      string
	SpecOverrides string
	ProCheckout   string
	Family        string
	Grading       string
	Strict        bool
	Shard         shardValue
	Workspace     bool
	LogDir        string
	// Engine is where sandboxes run: --docker_host and the cluster's
	// flags, as every command takes them.
	engineflags.Engine
	// PrepullWindow is Config.PrepullWindow.
	PrepullWindow int
	// StartAhead is Config.StartAhead.
	StartAhead     int
	KeepWorkspaces bool
	ShareObjects   bool
	Runtime        string
	// Limits of every sandbox (--memory, --cpus, --pids_limit); zero
	// fields keep the sandbox defaults.
	Limits sandbox.Limits
	// GrantCapabilities grants the capabilities a family's harness gives
	// its containers (--grant_capabilities).
	GrantCapabilities bool
	Verbose           bool

	// Official flags that change nothing in swebox (see noticeFlags).
	EnvImageTag   string
	ForceRebuild  bool
	CacheLevel    string
	Clean         bool
	OpenFileLimit int
	Modal         bool

	// datasetLabel names the dataset in messages instead of DatasetName.
	datasetLabel string
	// words are the verb and flags this run was started with, for the
	// command that resumes it.
	words []string
	// set records the canonical names of the flags given on the command
	// line (mode selection depends on what was explicit).
	set map[string]bool
}

// defaultRunOptions returns the official defaults (and ours).
func defaultRunOptions() runOptions {
	return runOptions{
		DatasetName:      "SWE-bench/SWE-bench_Lite",
		Split:            "test",
		MaxWorkers:       swebench.DefaultMaxWorkers,
		Timeout:          int(swebench.DefaultTimeout / time.Second),
		ReportDir:        ".",
		Namespace:        harness.DefaultNamespace,
		InstanceImageTag: harness.DefaultTag,
		Image:            swebench.DefaultImage,
		Grading:          string(harness.V5),
		Repeat:           1,
		LostRetries:      swebench.DefaultLostRetries,
		EnvImageTag:      harness.DefaultTag,
		CacheLevel:       "env",
		OpenFileLimit:    4096,
		LogDir:           swebench.DefaultLogDir,
		Engine:           engineflags.Defaults(),
	}
}

// flagSpec describes one flag: its names (the canonical long name first,
// then aliases such as the official short forms), its value and its help.
type flagSpec struct {
	names []string
	arg   string // placeholder of the value in the help, "" for booleans
	usage string
	value func(o *runOptions) flag.Value
	// swebox marks flags the official harness does not have.
	swebox bool
}

// runFlagSpecs lists the run flags in the order the help shows them.
var runFlagSpecs = []flagSpec{
	{names: []string{"dataset_name", "d"}, arg: "NAME", usage: "dataset: a Hugging Face name or alias (full, lite, verified, multilingual, multimodal; downloaded once, cached), a .json/.jsonl/.parquet file, or a directory holding <split>.jsonl or <split>.parquet",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.DatasetName) }},
	{names: []string{"split", "s"}, arg: "NAME", usage: "split of a Hugging Face dataset or of a dataset directory",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Split) }},
	{names: []string{"dataset_config"}, arg: "NAME", swebox: true, usage: "config (subset) of a Hugging Face dataset, for families that publish several; default the dataset's default",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.DatasetConfig) }},
	{names: []string{"predictions_path", "p"}, arg: "FILE", usage: "predictions (.json list or object, .jsonl), or 'gold' for the dataset's own patches; required",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.PredictionsPath) }},
	{names: []string{"instance_ids", "i"}, arg: "IDS", usage: "instances to run, space- or comma-separated; repeatable; default all",
		value: func(o *runOptions) flag.Value { return (*idListValue)(&o.InstanceIDs) }},
	{names: []string{"max_workers"}, arg: "N", usage: "instances evaluated at once (<= 0 runs one at a time)",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.MaxWorkers) }},
	{names: []string{"timeout", "t"}, arg: "SECONDS", usage: "time allowed for each instance's tests",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.Timeout) }},
	{names: []string{"run_id", "id"}, arg: "ID", usage: "names the log directory and the run report; rerunning an id skips instances that have a report.json, and those whose patch did not apply or whose tests timed out (see --retry_failures); required",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.RunID) }},
	{names: []string{"report_dir"}, arg: "DIR", usage: "directory of the run report <model>.<run_id>.json",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.ReportDir) }},
	{names: []string{"rewrite_reports"}, arg: "BOOL", usage: "re-grade existing test_output.txt files without running containers",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.RewriteReports) }},
	{names: []string{"retry_failures"}, arg: "", swebox: true, usage: "a rerun evaluates again the instances whose patch did not apply or whose tests timed out in an earlier attempt, as the official harness does; by default it retries only instances without a verdict for other reasons (engine, images, Ctrl-C, errors)",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.RetryFailures) }},
	{names: []string{"repeat"}, arg: "N", swebox: true, usage: "evaluate each instance N times and list in flaky.json (in the run's log directory) the tests and verdicts that changed between runs; report.json and the run report are the first run's; a rerun completes the runs left undone",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.Repeat) }},
	{names: []string{"task_repo", "task-repo"}, arg: "DIR", usage: "SWE-bench 5.0.2 task repository (sweb.yaml, tasks/<id>/): the rows are its tasks of --split (or the -i ids, from any split), gold patches included; each row's image is built from its task's Dockerfile before the run, as 5.0.2's eval --task-repo does, and only an image the build did not produce is pulled",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.TaskRepo) }},
	{names: []string{"namespace", "n"}, arg: "NS", usage: "prebuilt mode: images " + harness.InstanceImage("<id>", "<NS>", "<tag>") + "; giving it selects prebuilt mode ('none', 'null' or '' builds the images locally as upstream, see eval images build, unless --image or --image_map is given)",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Namespace) }},
	{names: []string{"instance_image_tag"}, arg: "TAG", usage: "prebuilt mode: tag of the instance images; giving it selects prebuilt mode",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.InstanceImageTag) }},

	{names: []string{"env_image_tag"}, arg: "TAG", usage: "with --namespace none: tag of the env images built; otherwise ignored with a notice",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.EnvImageTag) }},
	{names: []string{"force_rebuild"}, arg: "BOOL", usage: "with --namespace none: remove and rebuild the images; otherwise ignored with a notice; true with a namespace is refused, as the official ValueError",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.ForceRebuild) }},
	{names: []string{"cache_level"}, arg: "none|base|env|instance", usage: "with --namespace none: the images kept after the run, as upstream (images above the level that the run built are removed); otherwise ignored with a notice",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.CacheLevel) }},
	{names: []string{"clean"}, arg: "BOOL", usage: "with --namespace none: also remove the run's images above --cache_level that existed before it; otherwise ignored with a notice",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.Clean) }},
	{names: []string{"open_file_limit"}, arg: "N", usage: "accepted and ignored, with a notice: the official harness raises its own process's limit for its many Docker connections; swebox needs no such raise, and each container's open-file limit stays 4096",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.OpenFileLimit) }},
	{names: []string{"modal"}, arg: "BOOL", usage: "false is accepted; true is refused: swebox has no Modal backend, and running elsewhere than asked would not be the run asked for",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.Modal) }},

	{names: []string{string(harness.ModeWorkspace)}, arg: "", swebox: true, usage: "workspace mode for every instance: check each repository out at its base commit and mount it at /testbed in --image or the --image_map image (an official repository needs an --image_map entry)",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.Workspace) }},
	{names: []string{"repos"}, arg: "DIR", swebox: true, usage: "workspace mode: directory of local repositories (owner/name or owner__name, bare or not), searched before the network; repeatable",
		value: func(o *runOptions) flag.Value { return (*stringListValue)(&o.Repos) }},
	{names: []string{"image"}, arg: "IMAGE", swebox: true, usage: "workspace mode: image for repositories the image map does not name",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Image) }},
	{names: []string{"image_map"}, arg: "FILE", swebox: true, usage: "workspace mode: JSON object from owner/name or owner/name:version to an image (the version key wins)",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.ImageMap) }},
	{names: []string{"spec_overrides"}, arg: "FILE", swebox: true, usage: "JSON file adjusting test commands, parsers and images of custom repositories (see package swebench/spec)",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.SpecOverrides) }},
	{names: []string{"pro_checkout"}, arg: "DIR", swebox: true, usage: "SWE-bench Pro: a checkout of scaleapi/SWE-bench_Pro-os, whose run_scripts/<id>/ (run_script.sh, parser.py) and dockerfiles/ its harness reads; Pro rows need it",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.ProCheckout) }},
	{names: []string{"family"}, arg: "NAME", swebox: true, usage: "task family of every row (" + strings.Join(family.Names(), ", ") + "), for rows that do not say it themselves; default: the dataset's name or the row decides, and a row no family claims runs only in workspace mode",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Family) }},
	{names: []string{"grading"}, arg: "v4|v5", swebox: true, usage: "official harness release whose patch fallbacks, parsers and grading rules are reproduced",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Grading) }},
	{names: []string{"strict"}, arg: "", swebox: true, usage: "strict grading: the official verdicts minus every one a strict rule refuses (patches that rewrite conftest.py or pytest's configuration, forge the log, pre-empt the test patch or rebind pytest), each reason in report.json and the run report (see package swebench/strict)",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.Strict) }},
	{names: []string{"shard"}, arg: "I/N", swebox: true, usage: "run only the I-th of N slices (1 <= I <= N): the selected ids sorted, those at index I-1, I-1+N, ...",
		value: func(o *runOptions) flag.Value { return &o.Shard }},
	{names: []string{"log_dir"}, arg: "DIR", swebox: true, usage: "per-instance logs go to DIR/run_evaluation/<run_id>/<model>/<id>/",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.LogDir) }},
	engineFlag(engineflags.DockerHost),
	engineFlag(engineflags.UnenforcedLimits),
	engineFlag(engineflags.Kubeconfig.With("run every instance as a Pod on the Kubernetes cluster this kubeconfig file describes, instead of on Docker; --max_workers is the number of pods in flight (a build with -tags " + engineflags.Tag + " only: " + kubeBuildCommand + ")")),
	engineFlag(engineflags.KubeNamespace),
	engineFlag(engineflags.KubeNodeGrace),
	engineFlag(engineflags.KubeImageAffinity.With("with --kubeconfig: send each instance's pod to a node that holds its image, and have each node pull an image at most once at a time (false: wherever the scheduler puts it)")),
	{names: []string{"prepull_window"}, arg: "N", swebox: true, usage: "with --kubeconfig: while instances run, a node pulls the images of the next N instances (a short-lived pod each), where their pods then go; -1 for none; 0 means --max_workers",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.PrepullWindow) }},
	{names: []string{"start_ahead"}, arg: "N", swebox: true, usage: "while instances run, create and start the sandboxes of the next N instances, so that a worker finds its sandbox ready; for sandboxes that bind-mount no checkout of this machine (--kubeconfig, a remote --docker_host, prebuilt images); -1 for none; 0 means 2",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.StartAhead) }},
	{names: []string{"lost_retries"}, arg: "N", swebox: true, usage: "evaluate an instance again, from scratch on a new sandbox, up to N times when the cluster loses its sandbox (pod evicted or deleted, node lost); past them it is sandbox_lost, never a verdict; 0 for none",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.LostRetries) }},
	{names: []string{"instance_timeout"}, arg: "SECONDS", swebox: true, usage: "time allowed for each instance's whole evaluation, its retries after lost sandboxes included (a retry gets what is left); default 2 × --timeout + 600",
		value: func(o *runOptions) flag.Value { return (*intValue)(&o.InstanceTimeout) }},
	{names: []string{"keep_workspaces"}, arg: "", swebox: true, usage: "workspace mode: leave each instance's checkout on disk after grading",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.KeepWorkspaces) }},
	{names: []string{"share_objects"}, arg: "", swebox: true, usage: "workspace mode: let checkouts borrow the repository's objects read-only instead of carrying the base commit's; faster, but the tests can read later commits, the fix included",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.ShareObjects) }},
	{names: []string{"runtime"}, arg: "NAME", swebox: true, usage: "OCI runtime of every container, e.g. runsc (gVisor); default the engine's",
		value: func(o *runOptions) flag.Value { return (*stringValue)(&o.Runtime) }},
	{names: []string{"memory"}, arg: "BYTES", swebox: true, usage: "memory limit of every sandbox, swap equal to it (e.g. 4g); default 2g",
		value: func(o *runOptions) flag.Value { return bytesValue{&o.Limits.Memory} }},
	{names: []string{"disk_limit"}, arg: "BYTES", swebox: true, usage: "prebuilt mode: disk each sandbox may write to its root filesystem, copy-on-write over the instance image (e.g. 20g); past it the sandbox is killed and the instance is disk_limit; default 10g",
		value: func(o *runOptions) flag.Value { return bytesValue{&o.Limits.Disk} }},
	{names: []string{"cpus"}, arg: "N", swebox: true, usage: "CPUs of every sandbox (e.g. 1.5); default 2",
		value: func(o *runOptions) flag.Value { return cpusValue{&o.Limits.NanoCPUs} }},
	{names: []string{"pids_limit"}, arg: "N", swebox: true, usage: "processes and threads of every sandbox; default 512",
		value: func(o *runOptions) flag.Value { return (*int64Value)(&o.Limits.PidsLimit) }},
	{names: []string{"grant_capabilities"}, arg: "", swebox: true, usage: "grant the Linux capabilities a family's harness gives its containers (SWE-bench Multimodal's SYS_ADMIN for browser tests); each grant is written to run_instance.log; without it they are granted only under --runtime runsc (gVisor)",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.GrantCapabilities) }},
	{names: []string{"verbose", "v"}, arg: "", swebox: true, usage: "log what the evaluator does to stderr",
		value: func(o *runOptions) flag.Value { return (*boolValue)(&o.Verbose) }},
}

// engineFlag is a run flag of the engines' shared vocabulary.
func engineFlag(f engineflags.Flag) flagSpec {
	return flagSpec{names: []string{f.Name}, arg: f.Arg, usage: f.Usage, swebox: true,
		value: func(o *runOptions) flag.Value { return f.Value(&o.Engine) }}
}

// kubeBuildCommand builds eval with its Kubernetes backend.
const kubeBuildCommand = "go build -tags " + engineflags.Tag + " ./examples/eval"

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseRunFlags parses the flags of a run over the defaults in o. Names may
// be given with one or two dashes. As in the official argparse CLI,
// --instance_ids takes every following word up to the next flag, and the
// boolean flags accept a following yes/no word.
func parseRunFlags(o runOptions, args []string) (runOptions, error) {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	canonical := map[string]string{}
	for _, s := range runFlagSpecs {
		v := s.value(&o)
		for _, n := range s.names {
			fs.Var(v, n, s.usage)
			canonical[n] = s.names[0]
		}
	}
	if err := fs.Parse(normalizeArgs(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return o, usagef("unexpected argument %q (flags come as --name VALUE)", fs.Arg(0))
	}
	// The same flag under two names (-d and --dataset_name) is a mistake
	// the official CLI silently resolves by order; refuse it.
	byCanon := map[string][]string{}
	fs.Visit(func(f *flag.Flag) {
		byCanon[canonical[f.Name]] = append(byCanon[canonical[f.Name]], f.Name)
	})
	o.set = map[string]bool{}
	for c, names := range byCanon {
		o.set[c] = true
		if len(names) > 1 && !repeatable(fs.Lookup(c).Value) {
			sort.Strings(names)
			return o, usagef("flags %s name the same setting; give one", dashed(names))
		}
	}
	return o, o.validate()
}

// repeatable reports whether a flag collects every value it is given.
func repeatable(v flag.Value) bool {
	switch v.(type) {
	case *stringListValue, *idListValue:
		return true
	}
	return false
}

func dashed(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		if len(n) <= 2 {
			out[i] = "-" + n
		} else {
			out[i] = "--" + n
		}
	}
	return strings.Join(out, " and ")
}

// validate checks values and combinations.
func (o *runOptions) validate() error {
	if o.PredictionsPath == "" {
		return usagef("--predictions_path is required (a predictions file, or gold)")
	}
	if o.RunID == "" {
		return usagef("--run_id is required")
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be a positive number of seconds, got %d", o.Timeout)
	}
	if o.InstanceTimeout < 0 {
		return usagef("--instance_timeout must be a positive number of seconds, got %d", o.InstanceTimeout)
	}
	if o.LostRetries < 0 {
		return usagef("--lost_retries must be 0 or more, got %d", o.LostRetries)
	}
	if o.Repeat < 1 {
		return usagef("--repeat must be at least 1, got %d", o.Repeat)
	}
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = 1 // official: a value <= 0 runs sequentially
	}
	if o.LogDir == "" {
		return usagef("--log_dir must not be empty")
	}
	if o.Modal {
		return usagef("--modal true: swebox has no Modal backend. Run on Docker engines instead (--docker_host, repeatable) or in shards (--shard, examples/batch/)")
	}
	switch o.CacheLevel {
	case "none", "base", "env", "instance":
	default:
		return usagef("--cache_level must be one of none, base, env, instance, got %q", o.CacheLevel)
	}
	if o.ForceRebuild && o.set["namespace"] && !swebench.IsNoNamespace(o.Namespace) {
		// The official run_evaluation raises the same.
		return usagef("cannot force rebuild and use a namespace at the same time")
	}
	if err := o.Engine.Check(o.set); err != nil {
		return usagef("%v", err)
	}
	switch {
	case o.set["prepull_window"] && o.Kubeconfig == "":
		return usagef("--prepull_window applies to Kubernetes, chosen by --kubeconfig (Docker pulls each image before its instance)")
	case o.StartAhead < -1:
		return usagef("--start_ahead must be -1 (none) or more, got %d", o.StartAhead)
	case o.PrepullWindow < -1:
		return usagef("--prepull_window must be -1 (none) or more, got %d", o.PrepullWindow)
	case o.set["prepull_window"] && o.PrepullWindow >= 0 && !o.KubeImageAffinity:
		return usagef("--prepull_window needs --kube_image_affinity: a pulled image helps only when the instance's pod goes where it is")
	}
	if o.Kubeconfig != "" && o.set["namespace"] && swebench.IsNoNamespace(o.Namespace) && o.imageBuild() != nil {
		return usagef("--namespace %s with --kubeconfig: images built here go to this machine's Docker engine, which the cluster's nodes do not pull from. "+
			"Build them with Docker and push them to a registry the cluster pulls from (eval images build -d %s --push REGISTRY/NAMESPACE), "+
			"then run with --kubeconfig and --namespace REGISTRY/NAMESPACE", pyQuoteNS(o.Namespace), orDash(o.DatasetName))
	}
	if o.TaskRepo != "" && o.Kubeconfig != "" {
		return usagef("--task_repo with --kubeconfig: the task images are built on this machine's Docker engine, which the cluster's nodes do not pull from. "+
			"Build them with Docker for a registry the cluster pulls from (eval images build %s --namespace REGISTRY/NAMESPACE --push), "+
			"and run with the task images' names in the rows", o.TaskRepo)
	}
	// The library decides which settings contradict each other (the run
	// id, the rules, the modes, a task repository's rows).
	if err := runConfig(*o).Validate(); err != nil {
		return configUsage(err)
	}
	return nil
}

// configFlags names the flag of each swebench.Config field a run flag sets.
var configFlags = map[string]string{
	"Namespace": "--namespace", "ImageTag": "--instance_image_tag", "Image": "--image", "ImageMapFile": "--image_map",
	"RepoSources": "--repos", "KeepWorkspaces": "--keep_workspaces", "ShareObjects": "--share_objects",
	"Mode": "--workspace", "Family": "--family", "Shard": "--shard", "Rules": "--grading", "RunID": "--run_id", "Repeat": "--repeat",
	"RewriteReports": "--rewrite_reports", "TaskRepo": "--task_repo", "BuildImages": "--namespace none",
	"ProCheckout": "--pro_checkout",
}

// configUsage turns a *swebench.ConfigError into a usage error in terms of
// flags.
func configUsage(err error) error {
	var ce *swebench.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flagOf := func(field string) string {
		if f, ok := configFlags[field]; ok {
			return f
		}
		return field
	}
	msg := flagOf(ce.Field)
	if ce.Value != "" {
		msg += fmt.Sprintf(" %q", ce.Value)
	}
	if ce.Conflict != "" {
		msg += " conflicts with " + flagOf(ce.Conflict)
	}
	return usagef("%s: %s", msg, ce.Reason)
}

// checkBuilt refuses --kubeconfig in a build without the Kubernetes
// backend, naming the command that builds eval with it. It is apart from
// validate so that the flags parse alike in every build.
func (o *runOptions) checkBuilt() error {
	if err := o.Engine.CheckBuilt("eval", kubeRebuildCommand()); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// kubeRebuildCommand is the one command that gives this run a build with
// the Kubernetes backend: under `go run`, the same command line with the
// tag; otherwise the build of a binary with it.
func kubeRebuildCommand() string { return rebuildWithTag(selfCommand(), os.Args[1:]) }

// rebuildWithTag is kubeRebuildCommand for a program started as self
// (selfCommand) with args.
func rebuildWithTag(self, args []string) string {
	if len(self) > 2 && self[0] == "go" && self[1] == "run" {
		return shellQuote(append(append([]string{"go", "run", "-tags", engineflags.Tag}, self[2:]...), args...))
	}
	return kubeBuildCommand
}

// noticeFlags are the official flags swebox accepts but does not need,
// with what it does instead; a run prints one notice per flag given.
var noticeFlags = []struct{ name, notice string }{
	{"env_image_tag", "swebox builds no environment images; ignored"},
	{"force_rebuild", "swebox builds no images, so there is nothing to rebuild; ignored"},
	{"cache_level", "swebox builds no images, so there are none to keep or remove; ignored"},
	{"clean", "swebox builds no images, so there are none to remove; ignored"},
	{"open_file_limit", "the official harness raises its own process's open-file limit; swebox does not need to, and each container's limit stays 4096; ignored"},
	{"modal", "false is the default: the run uses Docker engines"},
}

// notices returns the notice lines of the no-op official flags given.
func (o *runOptions) notices() []string {
	var out []string
	building := o.set["namespace"] && swebench.IsNoNamespace(o.Namespace) && o.imageBuild() != nil
	for _, f := range noticeFlags {
		if building && (f.name == "env_image_tag" || f.name == "force_rebuild" || f.name == "cache_level" || f.name == "clean") {
			continue // honoured: the run builds images
		}
		if o.set[f.name] {
			out = append(out, "notice: --"+f.name+": "+f.notice)
		}
	}
	return out
}

// pyQuoteNS shows a namespace as it was spelled, ” for the empty one.
func pyQuoteNS(ns string) string {
	if ns == "" {
		return "''"
	}
	return ns
}

func orDash(s string) string {
	if s == "" {
		return "DATASET"
	}
	return s
}

// normalizeArgs rewrites the official argparse forms Go's flag package does
// not know: "--instance_ids a b c" (nargs="+") becomes one value, and a
// boolean flag followed by a yes/no word ("--rewrite_reports true") takes it
// as its value.
func normalizeArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, hasValue := flagName(a)
		switch {
		case !hasValue && (name == "instance_ids" || name == "i"):
			var ids []string
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				ids = append(ids, args[i])
			}
			if len(ids) == 0 {
				out = append(out, a) // flag reports the missing value
				continue
			}
			out = append(out, a+"="+strings.Join(ids, " "))
		case !hasValue && isBoolFlag(name) && i+1 < len(args) && isBoolWord(args[i+1]):
			out = append(out, a+"="+args[i+1])
			i++
		default:
			out = append(out, a)
		}
	}
	return out
}

// flagName returns the name of a flag argument ("" for a non-flag) and
// whether it carries its value after "=".
func flagName(a string) (string, bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", false
	}
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	if k := strings.IndexByte(name, '='); k >= 0 {
		return name[:k], true
	}
	return name, false
}

func isBoolFlag(name string) bool {
	for _, s := range runFlagSpecs {
		for _, n := range s.names {
			if n == name {
				b, ok := s.value(&runOptions{}).(interface{ IsBoolFlag() bool })
				return ok && b.IsBoolFlag()
			}
		}
	}
	return false
}

// parseBool is the official str2bool: yes/true/t/y/1 and no/false/f/n/0, in
// any letter case.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "true", "t", "y", "1":
		return true, nil
	case "no", "false", "f", "n", "0":
		return false, nil
	}
	return false, fmt.Errorf("want a boolean (yes/no, true/false, 1/0), got %q", s)
}

func isBoolWord(s string) bool {
	_, err := parseBool(s)
	return err == nil
}

// splitIDs splits an --instance_ids value on spaces and commas.
func splitIDs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// Flag values.

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

type intValue int

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want an integer, got %q", s)
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

// boolValue is a str2bool flag that may also stand alone (meaning true).
type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := parseBool(s)
	*v = boolValue(b)
	return err
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// stringListValue collects a repeatable flag.
type stringListValue []string

func (v *stringListValue) Set(s string) error {
	if s == "" {
		return errors.New("empty value")
	}
	*v = append(*v, s)
	return nil
}
func (v *stringListValue) String() string { return strings.Join(*v, ",") }

// idListValue collects instance ids from repeated, space- or
// comma-separated values.
type idListValue []string

func (v *idListValue) Set(s string) error {
	ids := splitIDs(s)
	if len(ids) == 0 {
		return errors.New("no instance id given")
	}
	*v = append(*v, ids...)
	return nil
}
func (v *idListValue) String() string { return strings.Join(*v, " ") }

// shardValue is --shard I/N (see swebench.Shard).
type shardValue swebench.Shard

func (s *shardValue) Set(v string) error {
	sh, err := swebench.ParseShard(v)
	if err != nil {
		return err
	}
	*s = shardValue(sh)
	return nil
}

func (s *shardValue) String() string { return swebench.Shard(*s).String() }

// gradingMode is the library's grading mode for --strict.
func (o runOptions) gradingMode() swebench.GradingMode {
	if o.Strict {
		return swebench.GradingStrict
	}
	return swebench.GradingOfficial
}
