package swebench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/swebox/swebox/sandbox"
)

// prepuller warms the images of upcoming instances while the current ones
// run (Config.PrepullWindow): when instance i takes a worker slot, the
// images of instances i+1 … i+window are handed to their engines'
// sandbox.Client.WarmImage, at most window at a time. On Kubernetes a node
// then pulls each of them (once; see package sandbox/kube), and the
// instance's pod later goes to that node. Engines that cannot warm
// (Docker, where awaitImage pulls) are skipped after their first answer.
// A failed warm is only logged: the instance's own pod pulls again and
// reports what the registry said.
type prepuller struct {
	e      *evaluator
	ids    []string
	window int
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup

	mu         sync.Mutex
	next       int             // the first instance index not yet handed out
	dispatched int             // the highest index that took a slot
	started    map[string]bool // host "\x00" image, handed out
	cannot     map[string]bool // hosts whose client cannot warm
}

// startPrepull returns the run's prepuller, nil when the window is off.
func (e *evaluator) startPrepull(ctx context.Context, ids []string) *prepuller {
	if e.cfg.PrepullWindow <= 0 || e.cfg.RewriteReports {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &prepuller{
		e: e, ids: ids, window: e.cfg.PrepullWindow, ctx: ctx, cancel: cancel,
		sem: make(chan struct{}, e.cfg.PrepullWindow), next: 0, dispatched: -1,
		started: map[string]bool{}, cannot: map[string]bool{},
	}
}

// dispatch tells the prepuller that instance i took a worker slot.
func (p *prepuller) dispatch(i int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dispatched = max(p.dispatched, i)
	for j := max(p.next, i+1); j <= i+p.window && j < len(p.ids); j++ {
		p.next = j + 1
		se := p.e.specs[p.ids[j]]
		if se.err != nil || se.ts.Image == "" {
			continue
		}
		c := p.e.cfg.Sandboxes[j%len(p.e.cfg.Sandboxes)]
		key := c.Host() + "\x00" + se.ts.Image
		if p.started[key] || p.cannot[c.Host()] {
			continue
		}
		p.started[key] = true
		p.wg.Add(1)
		go p.warm(j, c, se.ts.Image)
	}
}

// warm warms the image of instance j, unless the instance took its slot
// meanwhile (its own pod pulls then).
func (p *prepuller) warm(j int, c *sandbox.Client, image string) {
	defer p.wg.Done()
	select {
	case p.sem <- struct{}{}:
	case <-p.ctx.Done():
		return
	}
	defer func() { <-p.sem }()
	p.mu.Lock()
	skip := j <= p.dispatched || p.cannot[c.Host()]
	p.mu.Unlock()
	if skip {
		return
	}
	t0 := time.Now()
	err := c.WarmImage(p.ctx, image)
	switch {
	case errors.Is(err, sandbox.ErrNotSupported):
		p.mu.Lock()
		p.cannot[c.Host()] = true
		p.mu.Unlock()
	case err != nil && p.ctx.Err() == nil:
		p.e.log.Warn("prepull failed; the instance's sandbox pulls the image itself", "image", image, "instance", p.ids[j], "err", err)
	case err == nil:
		p.e.log.Debug("image prepulled", "image", image, "instance", p.ids[j], "took", since(t0))
	}
}

// stop ends the warms still under way and waits for them (each removes
// what it made).
func (p *prepuller) stop() {
	if p == nil {
		return
	}
	p.cancel()
	p.wg.Wait()
}
