package swebench

import "github.com/swebox/swebox/sandbox"

// SetCloseClient replaces how the run closes the client it made; the
// returned function restores it.
func SetCloseClient(f func(*sandbox.Client) error) (restore func()) {
	old := closeClient
	closeClient = f
	return func() { closeClient = old }
}
