// Command eval evaluates SWE-bench predictions in hardened containers. It is
// a thin layer over package swebench: it maps its flags onto a
// swebench.Config, lets swebench.Prepare plan the run (mode, images, engines)
// and prints the plan, the progress and the summary, adding advice to errors.
// The flags are those of the official
// `python -m swebench.harness.run_evaluation` (same names, meanings and
// defaults) and a few of its own.
//
// Without arguments it runs a bundled demo, offline: a small Python project
// whose git history is built deterministically from the files under demo/,
// seven instances covering every outcome, and a check of each verdict.
//
//	go run ./examples/eval                                     # the demo
//	go run ./examples/eval -d lite-test.jsonl -p preds.jsonl --run_id r1 --repos ~/mirrors
//	go run ./examples/eval -d lite-test.jsonl -p gold --run_id r1 --namespace swebench
//	go run ./examples/eval grade -d lite-test.jsonl --instance_id ID --log test_output.txt
//	go run ./examples/eval merge shard1.json shard2.json -o run.json
//	go run ./examples/eval prune --run_id r1
//	go run ./examples/eval parse test_output.txt
//
// `eval --help` lists the verbs and flags; the project README explains the
// modes and the output.
//
// The Kubernetes backend (--kubeconfig) links client-go, which more than
// doubles a first build, so it comes only with the kube build tag, as for
// the MCP server; both take the engine and cluster flags from
// internal/engineflags:
//
//	go build -tags kube ./examples/eval
//	./eval --kubeconfig ~/.kube/config -d lite-test.jsonl -p preds.jsonl --run_id r1
//
// A build without the tag parses the same flags and refuses --kubeconfig,
// naming that command.
//
// The exit status is 0 when a run completed, whatever the verdicts; 1 when it
// could not (engine unreachable, images missing, unreadable input), with a
// message saying what to do; 2 for a bad command line; 130 when interrupted by
// SIGINT or SIGTERM, which remove the running containers and keep the finished
// reports, so that a rerun with the same --run_id resumes.
package main
