//go:build !race

package sandbox_test

// raceFlags are the go build flags that match this test binary's, so that
// a program the tests build reuses the packages the binary was built from.
var raceFlags []string
