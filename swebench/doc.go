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
// Every file is written atomically; an instance with a report.json is
// finished, so a rerun with the same run id resumes where a crash or Ctrl-C
// left off.
//
// The pieces are sub-packages: dataset (rows and predictions), spec (test
// commands, parsers and eval scripts per repository and version), repo
// (go-git checkouts from local sources or a mirror cache), logparse (the
// official log parsers) and grade (grading and reports).
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
