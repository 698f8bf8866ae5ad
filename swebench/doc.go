// Package swebench evaluates predictions for SWE-bench-style datasets in
// hardened sandboxes and grades them as the official harness does.
//
// [Evaluate] runs one evaluation: for each instance with a non-empty patch it
// prepares the repository (a go-git checkout at base_commit mounted at
// /testbed in workspace mode, or an official instance image in prebuilt
// mode), starts a sandbox (network none, read-only root, capabilities
// dropped), applies the model patch with the official fallbacks, runs the
// official eval script between its start and end markers, parses the log with
// the repository's official parser and grades FAIL_TO_PASS / PASS_TO_PASS. It
// writes the official files:
//
//	logs/run_evaluation/<run_id>/<model>/<instance_id>/{patch.diff, eval.sh, test_output.txt, run_instance.log, report.json}
//	<report_dir>/<model>.<run_id>.json
//
// What a crash can and cannot leave behind:
//   - patch.diff, eval.sh, report.json and the run report are written to a
//     temporary file, synced, renamed into place and the directory synced:
//     they are whole or absent.
//   - test_output.txt is written the same way once the eval script has
//     ended (or timed out), so it exists only whole; a regrade
//     (RewriteReports) never reads the output of tests that were cut
//     short. When the script's output cannot be written in full (a full
//     disk), the instance is an error and no test_output.txt is left.
//   - run_instance.log is a log, appended a line at a time as the instance
//     runs: after a crash it ends where the crash came. Nothing is graded
//     from it.
//
// An instance with a report.json is finished, so a rerun with the same run
// id resumes where a crash or Ctrl-C left off; it removes the logs and the
// temporary files of the instances it runs again. An instance whose patch
// did not apply or whose tests timed out has no report.json (as in the
// official harness) but a swebox_outcome.json recording that outcome; a
// rerun reports it again without evaluating it, unless
// Config.RetryFailures, so that a rerun after infrastructure failures
// evaluates exactly the instances those left without a verdict.
//
// Every submitted instance ends with exactly one [Outcome] (resolved,
// unresolved, out_of_memory, patch_failed, timed_out, error, empty_patch,
// image_missing, image_pull_failed, image_build_failed, engine_lost,
// sandbox_lost, needs_network, cancelled),
// in [InstanceResult].Outcome, [Result].Outcomes and the run report's added
// key swebox_outcomes; the official keys are unchanged. needs_network is an
// instance of a family whose harness runs the tests with the network
// (Multi-SWE-bench, SWE-bench Pro, SWE-PolyBench, SWE-smith) that would be
// graded not resolved while its log shows a failed network attempt
// ([*NeedsNetworkError]): the sandbox has no network, so it gets no
// verdict. An instance whose sandbox a Kubernetes cluster lost
// (sandbox.ErrSandboxLost) is evaluated again from scratch, up to
// [Config].LostRetries times, and graded once;
// [InstanceResult].Retries and the run report's key swebox_retried record
// the lost attempts.
//
// Each instance runs as the official harness runs it unless the Config asks
// otherwise: in its official image (the row's image, or
// swebench/sweb.eval.x86_64.<id>:latest, pulled if missing) when the row
// names one or the harness tables know its repository, in workspace mode
// when they do not (see [Config].Mode). [Config.Validate] refuses settings
// that contradict each other with a [*ConfigError] naming the fields, and
// Prepare refuses an official repository in a workspace image the image map
// does not name ([*WorkspaceImageError]).
//
// [GradeLog] grades one log for a dataset row under a rule set, as the
// evaluator grades its own logs; every grading surface of the module uses
// it.
//
// [Prepare] resolves a Config into a [Plan] (mode, rules, the instances and
// images of the run, each engine checked) before anything is written;
// [Plan.Run] runs it. Errors are values: [InstanceResult].Err holds each
// instance's (errors.Is with sandbox.ErrEngineUnreachable, ErrPatchApply,
// ErrTestTimeout, ErrNoImage), and a run whose engine went away returns an
// [*EngineLostError].
//
// The pieces are sub-packages: harness (the vocabulary of the official
// harness: rules, modes, markers, FAIL_ONLY repositories, parser and image
// names), dataset (rows and predictions), spec (test commands, parsers and
// eval scripts per repository and version), repo (go-git checkouts from
// local sources or a mirror cache), logparse (the official log parsers) and
// grade (grading and reports).
//
// Usage:
//
//	ds, err := dataset.LoadDataset("swe-bench-lite.jsonl")
//	if err != nil {
//		return err
//	}
//	preds, err := dataset.LoadPredictions("preds.jsonl")
//	if err != nil {
//		return err
//	}
//	repos, err := repo.New(repo.WithLocalSources("/data/repos"))
//	if err != nil {
//		return err
//	}
//	res, err := swebench.Evaluate(ctx, swebench.Config{
//		Dataset: ds, Predictions: preds, RunID: "run1",
//		Repos: repos, ImageMap: map[string]string{"pallets/flask": "my/flask-env:latest"},
//	})
//	if err != nil {
//		return err
//	}
//	fmt.Println(res.Report.ResolvedInstances, "resolved; report at", res.ReportPath)
package swebench
