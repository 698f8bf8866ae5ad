package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swebox/swebox/internal/fsutil"
)

// LabelPool marks the sandboxes a warm pool started.
const LabelPool = "swebox.pool"

// Defaults of a warm pool.
const (
	DefaultPoolIdleTimeout = 5 * time.Minute
	maxPoolSize            = 256
	// poolFillers bounds the sandboxes a pool starts at once per spec, so
	// that refilling does not crowd out the engine's other work.
	poolFillers = 2
)

// PoolOptions configures a warm pool of started sandboxes (see [WithPool]).
type PoolOptions struct {
	// Size is how many started sandboxes are kept ready per spec. Required:
	// 1 to 256.
	Size int
	// IdleTimeout: the ready sandboxes of a spec no one asked for this long
	// are removed, and the spec is no longer kept ready. Default 5 minutes.
	IdleTimeout time.Duration
}

// WithPool keeps sandboxes started ahead of need, o.Size per spec (image,
// limits, mounts, everything but the command policy), once a spec has been
// asked for twice, or warmed with [Client.Warm]. [Client.Create] and [Client.Run]
// take a ready sandbox when there is one, which saves the engine's create
// and start, and otherwise create one as without a pool. Each pooled
// sandbox goes to exactly one caller and is never handed out again: Run
// removes it after its command, and Create's caller removes it as any
// other. The pool refills in the background, removes the sandboxes of idle
// specs, and removes what it holds on [Client.Close]; a crashed program's
// pooled sandboxes carry its session label and LabelPool, so Prune removes
// them. A spec with a container Name is never pooled. Default: no pool.
func WithPool(o PoolOptions) Option {
	return func(c *config) error {
		if o.Size < 1 || o.Size > maxPoolSize {
			return fmt.Errorf("WithPool: Size %d must be 1 to %d", o.Size, maxPoolSize)
		}
		if o.IdleTimeout < 0 {
			return fmt.Errorf("WithPool: negative IdleTimeout %v", o.IdleTimeout)
		}
		if o.IdleTimeout == 0 {
			o.IdleTimeout = DefaultPoolIdleTimeout
		}
		c.pool = &o
		return nil
	}
}

// pool holds the ready sandboxes of a client, per spec.
type pool struct {
	c    *Client
	opts PoolOptions

	mu      sync.Mutex
	entries map[string]*poolEntry
	closed  bool
	ctx     context.Context // ends on close; fillers run on it
	cancel  context.CancelFunc
	work    sync.WaitGroup // fillers and removals in flight
}

// poolEntry is the ready sandboxes of one spec.
type poolEntry struct {
	spec     Spec          // defaulted, with the pool label
	fresh    *NewWorkspace // each sandbox gets a workspace of its own
	ready    chan *Sandbox
	wake     chan struct{}
	lastUsed atomic.Int64 // unix nanoseconds
	retired  atomic.Bool  // idle too long: emptied and no longer refilled
	asked    atomic.Int64 // takes so far
	active   atomic.Bool  // kept ready: asked for twice, or warmed
}

func newPool(c *Client, opts PoolOptions) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &pool{c: c, opts: opts, entries: map[string]*poolEntry{}, ctx: ctx, cancel: cancel}
}

// poolKey identifies the sandboxes that can serve a defaulted spec: all of
// it but the policy, which only the client checks. ok is false for a spec
// the pool does not serve.
func poolKey(spec Spec) (key string, ok bool) {
	if spec.Name != "" {
		return "", false // a name is for one container only
	}
	spec.Policy = Policy{}
	b, err := json.Marshal(spec)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// entry returns the spec's entry, making it (and its filler) when new.
// With fresh, spec.Workspace is fresh's parent and each sandbox gets a new
// directory there.
func (p *pool) entry(spec Spec, fresh *NewWorkspace) *poolEntry {
	key, ok := poolKey(spec)
	if !ok {
		return nil
	}
	if fresh != nil {
		key = "fresh:" + key
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	e := p.entries[key]
	if e == nil {
		spec.Policy = Policy{}
		spec.Labels = mergeLabels(spec.Labels, map[string]string{LabelPool: "true"})
		e = &poolEntry{spec: spec, fresh: fresh, ready: make(chan *Sandbox, p.opts.Size), wake: make(chan struct{}, 1)}
		e.lastUsed.Store(time.Now().UnixNano())
		p.entries[key] = e
		p.work.Add(1)
		go p.fill(key, e)
	}
	return e
}

func mergeLabels(a, b map[string]string) map[string]string {
	m := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// take returns a ready sandbox for a defaulted spec, or nil when none is
// ready; either way the pool refills. The sandbox is the caller's alone.
func (p *pool) take(spec Spec) *Sandbox { return p.takeFrom(p.entry(spec, nil), spec) }

// takeFrom returns a ready sandbox of e for spec, or nil.
func (p *pool) takeFrom(e *poolEntry, spec Spec) *Sandbox {
	if e == nil {
		return nil
	}
	e.lastUsed.Store(time.Now().UnixNano())
	if e.asked.Add(1) >= 2 {
		// A spec asked for once (a per-call mount, say) is not worth
		// sandboxes kept ready; one asked for again is.
		e.active.Store(true)
	}
	defer e.kick()
	for {
		select {
		case sb := <-e.ready:
			if !sb.answers() {
				p.discard(sb, e)
				continue
			}
			if e.fresh != nil {
				spec.Workspace = sb.spec.Workspace
			}
			sb.spec = spec
			return sb
		default:
			return nil
		}
	}
}

func (e *poolEntry) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// fill keeps e's ready sandboxes at the pool's size until the spec has been
// idle for the pool's IdleTimeout or the pool closes; then it removes them.
func (p *pool) fill(key string, e *poolEntry) {
	defer p.work.Done()
	idle := time.NewTicker(max(p.opts.IdleTimeout/4, 10*time.Millisecond))
	defer idle.Stop()
	backoff := time.Duration(0)
	for {
		if n := p.opts.Size - len(e.ready); n > 0 && backoff == 0 && e.active.Load() {
			if err := p.startSome(e, n); err != nil {
				p.c.log.Warn("warm pool cannot start sandboxes", "image", e.spec.Image, "err", err)
				backoff = time.Second
			}
		}
		var retry <-chan time.Time
		if backoff > 0 {
			retry = time.After(backoff)
		}
		select {
		case <-e.wake:
		case <-retry:
			backoff = min(2*backoff, 30*time.Second)
			if err := p.startSome(e, p.opts.Size-len(e.ready)); err == nil {
				backoff = 0
			}
		case <-idle.C:
			if time.Since(time.Unix(0, e.lastUsed.Load())) < p.opts.IdleTimeout {
				continue
			}
			p.mu.Lock()
			if p.entries[key] == e {
				delete(p.entries, key)
			}
			e.retired.Store(true)
			p.mu.Unlock()
			p.drain(e)
			return
		case <-p.ctx.Done():
			p.drain(e)
			return
		}
	}
}

// startSome starts up to n sandboxes for e, poolFillers at a time, and adds
// them to its ready ones.
func (p *pool) startSome(e *poolEntry, n int) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, poolFillers)
	for range n {
		if p.ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			sb, err := p.c.createMember(p.ctx, e.spec, e.fresh)
			if err != nil {
				if p.ctx.Err() == nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				return
			}
			select {
			case e.ready <- sb:
			default:
				p.discard(sb, e)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drain removes e's ready sandboxes.
func (p *pool) drain(e *poolEntry) {
	for {
		select {
		case sb := <-e.ready:
			_ = removeMember(sb, e.fresh)
		default:
			return
		}
	}
}

// discard removes a sandbox of e (nil: one handed out by Run) in the
// background; close waits for it.
func (p *pool) discard(sb *Sandbox, e *poolEntry) {
	var fresh *NewWorkspace
	if e != nil {
		fresh = e.fresh
	}
	p.work.Add(1)
	go func() {
		defer p.work.Done()
		if err := removeMember(sb, fresh); err != nil {
			p.c.log.Warn("remove pooled sandbox", "id", shortID(sb.id), "err", err)
		}
	}()
}

// removeMember removes a sandbox the pool started and, when it was given a
// workspace of its own, that directory.
func removeMember(sb *Sandbox, fresh *NewWorkspace) error {
	err := sb.Remove(context.Background())
	if fresh != nil && err == nil {
		// The sandbox wrote there, maybe directories it made unreadable.
		err = fsutil.RemoveAll(sb.spec.Workspace)
	}
	return err
}

// close stops refilling and removes every sandbox the pool holds, and waits
// for the removals of used ones.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.work.Wait()
}

// ready counts the ready sandboxes of a spec.
func (p *pool) readyFor(spec Spec) int {
	key, ok := poolKey(spec.withDefaults())
	if !ok {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[key]; e != nil {
		return len(e.ready)
	}
	return 0
}

// answers reports whether a ready sandbox still answers: its agent accepts
// a connection. Without an agent it cannot tell cheaply and assumes so.
func (s *Sandbox) answers() bool {
	if s.agent == nil {
		return true
	}
	conn, err := s.agent.dial(context.Background())
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// runPooled runs req in a ready sandbox of the pool and removes the
// sandbox in the background. ok is false when the client has no pool or it
// has no sandbox of spec ready (or the one it had stopped): Run then starts
// one itself. The command runs as Exec runs it, with req's working
// directory, user and environment.
func (c *Client) runPooled(ctx context.Context, spec Spec, req ExecRequest) (res ExecResult, err error, ok bool) {
	if c.pool == nil || spec.Validate() != nil {
		return ExecResult{}, nil, false
	}
	sb := c.pool.take(spec.withDefaults())
	if sb == nil {
		return ExecResult{}, nil, false
	}
	defer c.pool.discard(sb, nil) // also when the caller panics
	res, err = sb.exec(ctx, req)
	if errors.Is(err, ErrNotRunning) {
		return ExecResult{}, nil, false
	}
	return res, err, true
}

// Warm makes the client's pool keep sandboxes of spec ready, and waits until
// it has at least n (at most the pool's size) or ctx ends. Without a pool it
// does nothing.
func (c *Client) Warm(ctx context.Context, spec Spec, n int) error {
	if c.pool == nil {
		return nil
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	spec = spec.withDefaults()
	n = min(n, c.pool.opts.Size)
	for {
		e := c.pool.entry(spec, nil)
		if e == nil {
			return nil // closed, or a spec the pool does not serve
		}
		// Waiting is using: the spec does not go idle meanwhile.
		e.lastUsed.Store(time.Now().UnixNano())
		e.active.Store(true)
		e.kick()
		if len(e.ready) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warm pool: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// PoolReady counts the started sandboxes of spec the pool holds ready; 0
// without a pool.
func (c *Client) PoolReady(spec Spec) int {
	if c.pool == nil {
		return 0
	}
	return c.pool.readyFor(spec)
}

// PoolSize is the size of the client's warm pool (PoolOptions.Size); 0
// without a pool.
func (c *Client) PoolSize() int {
	if c.pool == nil {
		return 0
	}
	return c.pool.opts.Size
}

// NewWorkspace asks [Client.CreateWithWorkspace] for a workspace of the
// sandbox's own.
type NewWorkspace struct {
	// Parent is the host directory the workspace is made in. Required: an
	// absolute path.
	Parent string
	// Prepare, when set, lays the new, empty directory out before the
	// sandbox starts. Default: none.
	Prepare func(dir string) error
}

// CreateWithWorkspace starts a sandbox from spec whose Workspace is a new
// host directory of its own, made under nw.Parent (mode 0755) and laid out
// by nw.Prepare before the sandbox starts; spec.Workspace must be empty. It
// is what a caller that makes a fresh workspace for each sandbox needs from
// a warm pool: specs alike but for that directory share the pool's
// sandboxes, each started with a directory made for it alone, so a
// sandbox and its directory are handed out once and never again. Without a
// pool (or none ready) it makes the directory and starts the sandbox
// itself. The caller removes the sandbox, then the directory
// (Spec().Workspace); the pool removes the ones it never handed out with
// their directories. Their paths start with nw.Parent, so a program that
// crashed can remove them all there.
func (c *Client) CreateWithWorkspace(ctx context.Context, spec Spec, nw NewWorkspace) (*Sandbox, error) {
	if spec.Workspace != "" {
		return nil, &SpecError{Field: "Workspace", Reason: "must be empty: CreateWithWorkspace makes it"}
	}
	if !filepath.IsAbs(nw.Parent) {
		return nil, &SpecError{Field: "NewWorkspace.Parent", Reason: fmt.Sprintf("host path %q must be absolute", nw.Parent)}
	}
	spec.Workspace = filepath.Clean(nw.Parent) // stands in for the directories made there
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	if c.pool != nil {
		if sb := c.pool.takeFrom(c.pool.entry(spec, &nw), spec); sb != nil {
			return sb, nil
		}
	}
	return c.createMember(ctx, spec, &nw)
}

// createMember starts a sandbox from a defaulted, valid spec; with fresh,
// in a new directory under spec.Workspace, which it removes again when the
// sandbox does not start.
func (c *Client) createMember(ctx context.Context, spec Spec, fresh *NewWorkspace) (*Sandbox, error) {
	if fresh == nil {
		return c.create(ctx, spec)
	}
	dir, err := os.MkdirTemp(spec.Workspace, "ws-")
	if err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	err = os.Chmod(dir, 0o755)
	if err == nil && fresh.Prepare != nil {
		err = fresh.Prepare(dir)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("prepare workspace: %w", err), os.RemoveAll(dir))
	}
	spec.Workspace = dir
	sb, err := c.create(ctx, spec)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return sb, nil
}
