//go:build race

package main

// raceEnabled builds the server under test with the race detector too, when
// the tests run with -race.
func init() { raceEnabled = true }
