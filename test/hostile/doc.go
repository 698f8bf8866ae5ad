// Package hostile holds black-box tests that run hostile model predictions
// and hostile metadata through swebench.Evaluate: fork bombs, memory hogs,
// disk fillers, output floods, network probes, sleepers, escaping daemons,
// forged harness markers, symlinks to host paths, unremovable files, patches
// that reach outside the repository, undecodable output, and instance ids,
// model names and run ids built to escape the log directory.
//
// Each test asserts how the instance ends (graded or an error, as the
// official harness would), that the other instances of the run are
// unaffected, that the host is unharmed and that no container is left.
//
//	go test ./test/hostile/
//
// The tests skip when no Docker engine answers or the test image
// (SWEBOX_TEST_IMAGE, default swebox/python:bookworm) is missing.
// SECURITY.md maps each defence to the test that proves it.
package hostile
