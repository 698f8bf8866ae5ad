package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swebox/swebox/sandbox"
)

// A Reset never restores a sandbox the agent used: whatever it restored
// from, and whatever checked the result, would sit where the agent's
// processes could have reached (the sandbox's own files, git's object store
// and config, /tmp, /dev/shm, IPC objects, processes that outlive their
// command). Instead the used sandbox is removed with its workspace, and
// the environment goes on in a new sandbox made by the code path Start
// uses, from the same inputs (the plan's testbed, Config.Spec,
// StartRequest.Spec), none of which the agent can write. From the first
// Reset on, the next sandbox is started ahead while the agent works (see
// Config.NoSpare), so that a Reset is a swap; an environment used once and
// closed, as a fresh-per-rollout loop uses it, starts none.

// spare is a sandbox started ahead for the next Reset.
type spare struct {
	done   chan struct{} // closed when sb, ws and err are set
	cancel context.CancelFunc
	sb     *sandbox.Sandbox
	ws     string
	err    error
}

// startSpare starts the next sandbox in the background; the caller holds
// e.mu.
func (e *Env) startSpare() {
	if e.t.cfg.NoSpare || e.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp := &spare{done: make(chan struct{}), cancel: cancel}
	e.spare = sp
	go func() {
		defer close(sp.done)
		sp.sb, sp.ws, sp.err = e.newSandbox(ctx)
	}()
}

// discard ends sp's start and removes what it made.
func (sp *spare) discard() error {
	sp.cancel()
	<-sp.done
	if sp.sb == nil {
		return nil
	}
	return removeSandbox(sp.sb, sp.ws)
}

// ResetResult says how Reset went.
type ResetResult struct {
	// Spare: the new sandbox had been started ahead (Config.NoSpare
	// off), so Reset did not wait for a start of its own.
	Spare bool
	// Duration is how long Reset took, until the first command could run.
	Duration time.Duration
}

// Reset gives the environment a new sandbox for the next rollout, made as
// Start makes one: the used sandbox and its workspace are removed (in the
// background; Close waits for that), and a sandbox started ahead from the
// task's testbed takes its place, or, when there is none (the first
// Reset, or Config.NoSpare) or it failed to start, one started now; then
// the next one is started ahead. Nothing of the earlier rollout carries over: no
// file, git object, ref or config, process, /tmp or /dev/shm entry, IPC
// object. [Env.Sandbox] is a new sandbox afterwards. A command running
// meanwhile in the used sandbox is killed. An error means no sandbox
// could be started; the environment is then closed.
func (e *Env) Reset(ctx context.Context) (ResetResult, error) {
	start := time.Now()
	e.resetMu.Lock()
	defer e.resetMu.Unlock()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ResetResult{}, errors.New("reset: task environment is closed")
	}
	old, oldWS, sp := e.sb, e.ws, e.spare
	e.sb, e.ws, e.spare = nil, "", nil
	e.removeLater(old, oldWS)
	e.mu.Unlock()

	var res ResetResult
	sb, ws, err := e.takeSpare(ctx, sp)
	if sb != nil {
		res.Spare = true
	} else {
		if err != nil && ctx.Err() != nil {
			return res, e.failReset(err)
		}
		// No spare, or it failed (its error is the engine's to tell
		// again): start one now.
		sb, ws, err = e.newSandbox(ctx)
		if err != nil {
			return res, e.failReset(err)
		}
	}
	e.mu.Lock()
	if e.closed { // closed meanwhile
		e.mu.Unlock()
		return res, errors.Join(errors.New("reset: task environment is closed"), removeSandbox(sb, ws))
	}
	e.sb, e.ws = sb, ws
	e.startSpare()
	e.mu.Unlock()
	res.Duration = time.Since(start)
	return res, nil
}

// takeSpare waits for sp (nil: none) and returns its sandbox if it started
// and is still running; otherwise it removes what sp made and returns nil
// with the spare's error, if any.
func (e *Env) takeSpare(ctx context.Context, sp *spare) (*sandbox.Sandbox, string, error) {
	if sp == nil {
		return nil, "", nil
	}
	select {
	case <-sp.done:
	case <-ctx.Done():
		e.discardLater(sp)
		return nil, "", ctx.Err()
	}
	if sp.err != nil {
		return nil, "", sp.err
	}
	if st, err := sp.sb.State(ctx); err != nil || !st.Running {
		e.discardLater(sp)
		return nil, "", err
	}
	return sp.sb, sp.ws, nil
}

// failReset closes the environment after a Reset that could start no
// sandbox.
func (e *Env) failReset(err error) error {
	return fmt.Errorf("reset %s: start a sandbox: %w", e.Instance.InstanceID, errors.Join(err, e.closeLocked()))
}

// removeLater removes sb and its workspace in the background; Close waits
// for it. The caller holds e.mu.
func (e *Env) removeLater(sb *sandbox.Sandbox, ws string) {
	if sb == nil {
		return
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		e.noteErr(removeSandbox(sb, ws))
	}()
}

// discardLater discards sp in the background; Close waits for it.
func (e *Env) discardLater(sp *spare) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		e.noteErr(sp.discard())
	}()
}

// noteErr keeps a background removal's error for Close to return.
func (e *Env) noteErr(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	e.bgErr = errors.Join(e.bgErr, err)
	e.mu.Unlock()
}
