package swebench

import (
	"context"

	"github.com/swebox/swebox/sandbox"
)

// SetCloseClient replaces how the run closes the client it made; the
// returned function restores it.
func SetCloseClient(f func(*sandbox.Client) error) (restore func()) {
	old := closeClient
	closeClient = f
	return func() { closeClient = old }
}

// SetLostHook makes every attempt call f once its sandbox has started (see
// lostHook); the returned function restores the hook.
func SetLostHook(f func(ctx context.Context, instanceID string, retry int) error) (restore func()) {
	old := lostHook
	lostHook = f
	return func() { lostHook = old }
}
