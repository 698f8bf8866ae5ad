// Package load holds load tests: many sandboxes at once through the sandbox
// library, an evaluation in-process with more workers than cores, and, when
// SWEBOX_LOAD=1 is set, 200 instances of the eval command's demo dataset
// (replicated under new ids) with 8 workers through the eval command.
//
// Each asserts that every verdict is the expected one and that nothing
// leaks: no container or volume is left on the engine, and the process ends
// with the goroutines and file descriptors it started with. The gated test
// also samples the eval process's memory and descriptors and logs the
// figures recorded in BENCHMARKS.md:
//
//	go test ./test/load/                                   # the quick ones (about a minute)
//	SWEBOX_LOAD=1 go test ./test/load/ -run TestLoad200 -v -timeout 30m
//
// The tests skip when no Docker engine answers or the test image is missing.
package load
