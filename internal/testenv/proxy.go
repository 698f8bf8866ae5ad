package testenv

import (
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// EngineProxy forwards connections to an engine, so that a test can present
// the local engine as one on another machine (a TCP address) or make it go
// away mid-run (TakeDown), through the package's public options only.
type EngineProxy struct {
	ln                net.Listener
	targetNet, target string
	host              string
	mu                sync.Mutex
	conns             map[net.Conn]bool
	down              bool
}

// NewEngineProxy listens on network ("tcp": the loopback; "unix": a socket
// in a temporary directory) and forwards every connection to engineHost,
// e.g. unix:///var/run/docker.sock. It stops when the test ends.
func NewEngineProxy(t testing.TB, engineHost, network string) *EngineProxy {
	t.Helper()
	proto, addr, ok := strings.Cut(engineHost, "://")
	require.True(t, ok, "engine host %q", engineHost)
	if proto == "http" || proto == "https" {
		proto = "tcp"
	}
	p := &EngineProxy{targetNet: proto, target: addr, conns: map[net.Conn]bool{}}
	var err error
	switch network {
	case "tcp":
		p.ln, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p.host = "tcp://" + p.ln.Addr().String()
	case "unix":
		path := filepath.Join(t.TempDir(), "engine.sock")
		p.ln, err = net.Listen("unix", path)
		require.NoError(t, err)
		p.host = "unix://" + path
	default:
		t.Fatalf("NewEngineProxy: network %q", network)
	}
	go p.serve()
	t.Cleanup(p.TakeDown)
	return p
}

// Host is the address to give sandbox.WithHost.
func (p *EngineProxy) Host() string { return p.host }

// TakeDown makes the engine unreachable from now on: the listener and
// every forwarded connection are closed.
func (p *EngineProxy) TakeDown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return
	}
	p.down = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *EngineProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial(p.targetNet, p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		var left sync.WaitGroup
		left.Add(2)
		go p.pipe(in, out, &left)
		go p.pipe(out, in, &left)
		go func() {
			left.Wait()
			p.untrack(in, out)
		}()
	}
}

// track registers the pair, or closes it when the proxy is down.
func (p *EngineProxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		_, _ = a.Close(), b.Close()
		return false
	}
	p.conns[a], p.conns[b] = true, true
	return true
}

func (p *EngineProxy) untrack(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = a.Close(), b.Close()
	delete(p.conns, a)
	delete(p.conns, b)
}

// pipe copies one direction, then half-closes it, as the engine's hijacked
// streams expect.
func (p *EngineProxy) pipe(dst, src net.Conn, left *sync.WaitGroup) {
	defer left.Done()
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
}
