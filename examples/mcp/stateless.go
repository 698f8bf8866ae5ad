package main

import (
	"strings"
	"sync"
	"time"
)

// idleClients ends what a stateless client (protocol 2026-07-28, owner
// "client:NAME") holds once it has made no call for --client_idle and has no
// background job running: its sandbox sessions, task sessions, jobs and
// kept content. A stateful client's go when its MCP session ends, a stdio
// client's when the server exits; a stateless client has neither end, so
// idleness is its end. The server's exit ends the rest.
type idleClients struct {
	idle time.Duration
	drop func(owner string)      // ends what owner holds
	busy func(owner string) bool // a background job of owner runs

	mu      sync.Mutex
	byOwner map[string]*idleClient
	closed  bool
}

type idleClient struct {
	calls int // running now
	timer *time.Timer
}

func newIdleClients(idle time.Duration, drop func(string), busy func(string) bool) *idleClients {
	return &idleClients{idle: idle, drop: drop, busy: busy, byOwner: map[string]*idleClient{}}
}

// begin records a call of owner; the returned func records its end, from
// which the idle time counts. Owners other than stateless clients are not
// tracked.
func (ic *idleClients) begin(owner string) func() {
	if ic == nil || !strings.HasPrefix(owner, clientOwnerPrefix) {
		return func() {}
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.closed {
		return func() {}
	}
	c := ic.byOwner[owner]
	if c == nil {
		c = &idleClient{}
		ic.byOwner[owner] = c
	}
	c.calls++
	if c.timer != nil {
		c.timer.Stop()
	}
	return func() {
		ic.mu.Lock()
		defer ic.mu.Unlock()
		c.calls--
		if c.calls == 0 && !ic.closed {
			c.timer = time.AfterFunc(ic.idle, func() { ic.expire(owner, c) })
		}
	}
}

// expire drops owner if it is still idle: no call since the timer was set
// and no background job running (a job's end restarts the wait).
func (ic *idleClients) expire(owner string, c *idleClient) {
	ic.mu.Lock()
	if ic.closed || ic.byOwner[owner] != c || c.calls > 0 {
		ic.mu.Unlock()
		return
	}
	if ic.busy(owner) {
		c.timer = time.AfterFunc(ic.idle, func() { ic.expire(owner, c) })
		ic.mu.Unlock()
		return
	}
	delete(ic.byOwner, owner)
	ic.mu.Unlock()
	ic.drop(owner)
}

// Close stops every timer: at exit the server ends what all clients hold.
func (ic *idleClients) Close() {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.closed = true
	for _, c := range ic.byOwner {
		if c.timer != nil {
			c.timer.Stop()
		}
	}
}

// running reports whether owner has a background job running.
func (js *jobs) running(owner string) bool {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.byID {
		j.mu.Lock()
		r := j.owner == owner && j.state == "running"
		j.mu.Unlock()
		if r {
			return true
		}
	}
	return false
}
