package swebench

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/swebox/swebox/sandbox"
)

// starter starts the sandboxes of upcoming instances while the current ones
// run (Config.StartAhead): when instance i takes a worker slot, instances
// i+1 … i+window get theirs created and started, so that the worker that
// takes one up finds it ready instead of waiting for it. On Kubernetes a
// sandbox's pod takes seconds to be scheduled, start and be isolated by the
// network policy; on Docker a container takes a fraction of a second.
//
// Only a sandbox whose spec names no host directory is started ahead (the
// checkout is copied in once the worker has it: Kubernetes, CopyWorkspace,
// prebuilt mode); a bind-mounted checkout is made by the worker. What is
// started ahead is an offer, never a verdict: the worker takes it only when
// it started and its spec is the one the worker would create, and otherwise
// creates its own, whose failure is then reported as any other. A sandbox
// no worker took is removed when its instance ends and when the run ends;
// a crashed run's carry the run's labels like the others.
type starter struct {
	e      *evaluator
	ids    []string
	window int
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	next    int                      // the first instance index not yet considered
	started map[string]*startedAhead // by instance id, until taken or dropped
}

// startedAhead is one instance's sandbox, being started or started.
type startedAhead struct {
	client *sandbox.Client
	spec   sandbox.Spec
	done   chan struct{}
	sb     *sandbox.Sandbox // set with err before done is closed
	err    error
}

// startAhead returns the run's starter, nil when it is off.
func (e *evaluator) startAhead(ctx context.Context, ids []string) *starter {
	if e.cfg.StartAhead <= 0 || e.cfg.RewriteReports {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &starter{e: e, ids: ids, window: e.cfg.StartAhead, ctx: ctx, cancel: cancel, started: map[string]*startedAhead{}}
}

// dispatch tells the starter that instance i took a worker slot.
func (s *starter) dispatch(i int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for j := max(s.next, i+1); j <= i+s.window && j < len(s.ids); j++ {
		s.next = j + 1
		client, spec, ok := s.e.aheadSpec(j, s.ids[j])
		if !ok {
			continue
		}
		sa := &startedAhead{client: client, spec: spec, done: make(chan struct{})}
		s.started[s.ids[j]] = sa
		s.wg.Add(1)
		go s.start(s.ids[j], sa)
	}
}

// aheadSpec is the spec instance n's sandbox would be created with, when it
// can be started before its worker comes (see starter).
func (e *evaluator) aheadSpec(n int, id string) (*sandbox.Client, sandbox.Spec, bool) {
	se := e.specs[id]
	if se.err != nil || se.ts.Image == "" {
		return nil, sandbox.Spec{}, false
	}
	inst, ok := e.sel.Instance(id)
	if !ok {
		return nil, sandbox.Spec{}, false
	}
	dir, err := e.instanceDir(id)
	if err != nil {
		return nil, sandbox.Spec{}, false
	}
	if _, kept := e.earlierResult(inst, e.sel.Predictions[id], dir); kept {
		return nil, sandbox.Spec{}, false // an earlier run's result stands
	}
	client := e.cfg.Sandboxes[n%len(e.cfg.Sandboxes)]
	tb := e.testbed(client, inst, se.ts)
	if tb.Bind {
		return nil, sandbox.Spec{}, false
	}
	return client, tb.Spec, true
}

// start creates and starts one instance's sandbox. An image the engine
// cannot confirm (missing, rate-limited) is left to the instance's worker,
// which reports it.
func (s *starter) start(id string, sa *startedAhead) {
	defer s.wg.Done()
	defer close(sa.done)
	t0 := time.Now()
	if sa.err = s.e.images.ensure(s.ctx, sa.client, sa.spec.Image); sa.err != nil {
		return
	}
	sa.sb, sa.err = sa.client.Create(s.ctx, sa.spec)
	if sa.err == nil {
		s.e.log.Debug("sandbox started ahead", "instance", id, "id", sa.sb.ID(), "took", since(t0))
	}
}

// take hands instance id's worker the sandbox started for it, waiting for
// a start under way. It returns nil when there is none, or when spec (what
// the worker would create on client) differs from what was started; nil
// and the error when the start failed, which the worker reports and then
// starts its own.
func (s *starter) take(ctx context.Context, id string, client *sandbox.Client, spec sandbox.Spec) (*sandbox.Sandbox, error) {
	sa := s.claim(id)
	if sa == nil {
		return nil, nil
	}
	select {
	case <-sa.done:
	case <-ctx.Done():
		s.discard(sa)
		return nil, nil
	}
	if sa.err != nil {
		return nil, sa.err
	}
	if sa.client != client || !reflect.DeepEqual(sa.spec, spec) {
		s.discard(sa)
		return nil, nil
	}
	return sa.sb, nil
}

// drop removes instance id's sandbox if its worker did not take it.
func (s *starter) drop(id string) {
	if sa := s.claim(id); sa != nil {
		s.discard(sa)
	}
}

func (s *starter) claim(id string) *startedAhead {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sa := s.started[id]
	delete(s.started, id)
	return sa
}

// discard removes a sandbox no one takes, once its start has ended.
func (s *starter) discard(sa *startedAhead) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-sa.done
		if sa.sb == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), time.Minute)
		defer cancel()
		if err := sa.sb.Remove(ctx); err != nil {
			s.e.log.Warn("could not remove a sandbox started ahead", "id", sa.sb.ID(), "err", err)
		}
	}()
}

// stop ends the starts under way and removes every sandbox no worker took.
func (s *starter) stop() {
	if s == nil {
		return
	}
	s.cancel()
	s.mu.Lock()
	left := s.started
	s.started = map[string]*startedAhead{}
	s.mu.Unlock()
	for _, sa := range left {
		s.discard(sa)
	}
	s.wg.Wait()
}
