package swebench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swebox/swebox/sandbox"
)

// PullRetryError is a pull that a registry kept refusing for its rate
// limit: every one of Attempts pulls over Waited. It wraps the last pull's
// error, an *sandbox.ImageError matching sandbox.ErrRateLimited.
type PullRetryError struct {
	Image    string
	Attempts int
	Waited   time.Duration
	Err      error
}

func (e *PullRetryError) Error() string {
	return fmt.Sprintf("gave up pulling %s after %d attempts over %s: %v", e.Image, e.Attempts, e.Waited, e.Err)
}

func (e *PullRetryError) Unwrap() error { return e.Err }

// awaitImage makes sure the image of instance n is on its engine before
// the instance is evaluated, when a registry's rate limit refuses the pull:
// it waits Config.PullBackoff, doubling, up to Config.PullRetries times,
// and while it waits it holds no worker slot (pause gives it up, resume
// takes one again). When it gives up, the last error is what the instance's
// own image check then returns (PullRetryError). Any other outcome of the
// pull is left to that check. It returns false when ctx ended while it
// waited.
func (e *evaluator) awaitImage(ctx context.Context, n int, id string, pause func(), resume func() bool) bool {
	se := e.specs[id]
	if se.err != nil || se.ts.Image == "" {
		return true
	}
	client := e.cfg.Sandboxes[n%len(e.cfg.Sandboxes)]
	wait, waited := e.cfg.PullBackoff, time.Duration(0)
	for attempt := 1; ; attempt++ {
		err := e.images.ensure(ctx, client, se.ts.Image)
		if !errors.Is(err, sandbox.ErrRateLimited) || ctx.Err() != nil {
			return true
		}
		if attempt > e.cfg.PullRetries {
			e.images.settle(client, se.ts.Image, &PullRetryError{Image: se.ts.Image, Attempts: attempt, Waited: waited, Err: err})
			return true
		}
		e.log.Warn("registry rate limit; waiting before pulling again", "image", se.ts.Image, "instance", id, "wait", wait, "attempt", attempt)
		pause()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		if !resume() {
			return false
		}
		waited += wait
		wait *= 2
	}
}

// pullTries counts the waits of an instance whose sandbox's node was refused
// its image for a registry's rate limit.
type pullTries struct {
	n      int
	wait   time.Duration // before the next try; 0: Config.PullBackoff
	waited time.Duration
}

// pullBackoff handles an attempt that failed because a node's pull of the
// image hit a registry's rate limit: on Kubernetes the node pulls as the pod
// starts, so awaitImage cannot wait for it beforehand. It waits
// Config.PullBackoff, doubling, and reports again = true up to
// Config.PullRetries times; then it returns the *PullRetryError to end the
// instance with. The instance keeps its worker slot while it waits. Any
// other error, or one awaitImage already gave up on, is left alone.
func (e *evaluator) pullBackoff(ctx context.Context, id string, err error, t *pullTries) (again bool, final error) {
	var given *PullRetryError
	if !errors.Is(err, sandbox.ErrRateLimited) || errors.As(err, &given) || ctx.Err() != nil {
		return false, nil
	}
	image := e.specs[id].ts.Image
	if t.n >= e.cfg.PullRetries {
		return false, &PullRetryError{Image: image, Attempts: t.n + 1, Waited: t.waited, Err: err}
	}
	if t.wait == 0 {
		t.wait = e.cfg.PullBackoff
	}
	e.log.Warn("registry rate limit on a node's pull; waiting before starting the sandbox again", "image", image, "instance", id, "wait", t.wait, "attempt", t.n+1)
	timer := time.NewTimer(t.wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return false, nil
	}
	t.n++
	t.waited += t.wait
	t.wait *= 2
	return true, nil
}
