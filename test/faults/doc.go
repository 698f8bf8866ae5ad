// Package faults holds tests of evaluation runs that meet infrastructure
// faults: a Docker engine that is unreachable from the start or goes away in
// the middle of a run, an eval process killed with SIGKILL, and Ctrl-C.
//
// Each test asserts what the user is promised: a clear message and nothing
// written when no engine answers; error instances, a clean end and a rerun
// that resumes them when the engine goes away; reports that are never
// half-written, a rerun with the same run id that completes exactly the
// unfinished instances, and `eval prune` removing the orphans after a
// SIGKILL; every container of the run removed within seconds of Ctrl-C.
//
//	go test ./test/faults/
//
// The engine going away is simulated in-process (a client whose connections
// start failing); the real dockerd is never stopped. The tests that run the
// eval command build it with `go build ./examples/eval`. Tests that need an
// engine skip when none answers or the test image is missing.
package faults
