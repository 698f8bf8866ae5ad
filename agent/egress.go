package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Egress grants a sandbox network access to named hosts only. The sandbox
// itself keeps no network interface besides loopback; a launcher inside it
// relays 127.0.0.1 connections to a Unix socket of a proxy the manager runs
// on the host, and points HTTP_PROXY and HTTPS_PROXY at the relay. The proxy
// serves CONNECT (for HTTPS and any TCP protocol) and plain HTTP requests,
// to listed hosts only; everything else is refused with status 403 and
// logged. Programs that ignore the proxy variables have no route out.
//
// Egress needs python3 in the image (the relay is part of the launcher) and
// the runc runtime: gVisor's runsc, registered with --network=none, cannot
// reach the proxy's socket.
type Egress struct {
	// Hosts lists what may be reached:
	//   "example.com"       the name, ports 80 and 443
	//   "example.com:8443"  the name, that port ("*" for any port)
	//   "*.example.com"     subdomains of example.com, ports 80 and 443
	//   "203.0.113.7", "[2001:db8::1]:8080", "10.0.0.0/8"
	//                       addresses (with a port, or a prefix; ports 80
	//                       and 443 unless given)
	Hosts []string
	// AllowPrivate lets names resolve to loopback, private (RFC 1918, ULA)
	// and shared (100.64/10) addresses; an address or prefix listed in
	// Hosts may always be reached. Link-local addresses and cloud metadata
	// services (169.254.169.254 and the like) are refused whatever the
	// list says. Default false.
	AllowPrivate bool
}

// Enabled reports whether e grants any access.
func (e Egress) Enabled() bool { return len(e.Hosts) > 0 }

func (e Egress) validate(runtime string) error {
	if !e.Enabled() {
		return nil
	}
	if runtime == "runsc" {
		return fmt.Errorf("%w with runtime runsc: gVisor is registered with --network=none and cannot reach the proxy; use runc", ErrEgressUnsupported)
	}
	_, err := newEgressPolicy(e)
	return err
}

// EgressEvent is one request the egress proxy answered.
type EgressEvent struct {
	Time    time.Time
	Method  string // "CONNECT" or the HTTP method of a plain request
	Host    string
	Port    string
	Allowed bool
	Reason  string // why it was refused
}

// egressRule is one parsed entry of Egress.Hosts.
type egressRule struct {
	name   string       // lower-case host name; empty for an address rule
	suffix bool         // "*.name": subdomains only
	prefix netip.Prefix // address rules
	port   string       // "" for 80 and 443, "*" for any, else one port
	any    bool         // matches every host (the fetch client's rule)
}

type egressPolicy struct {
	rules        []egressRule
	allowPrivate bool
	resolver     *net.Resolver
	dialer       net.Dialer
}

func newEgressPolicy(e Egress) (*egressPolicy, error) {
	p := &egressPolicy{allowPrivate: e.AllowPrivate, resolver: net.DefaultResolver, dialer: net.Dialer{Timeout: 15 * time.Second}}
	for _, h := range e.Hosts {
		r, err := parseEgressRule(h)
		if err != nil {
			return nil, optErr("Egress.Hosts", "%q: %v", h, err)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseEgressRule(s string) (egressRule, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return egressRule{}, errors.New("empty entry")
	}
	if pfx, err := netip.ParsePrefix(s); err == nil {
		return egressRule{prefix: pfx.Masked()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return egressRule{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())}, nil
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
		if port != "*" {
			if _, err := netip.ParseAddrPort("0.0.0.0:" + port); err != nil {
				return egressRule{}, fmt.Errorf("bad port %q", port)
			}
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return egressRule{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port}, nil
	}
	r := egressRule{port: port}
	if strings.HasPrefix(host, "*.") {
		r.suffix, host = true, host[2:]
	}
	if host == "" || strings.ContainsAny(host, "*/@ ") || strings.Trim(host, ".") != host {
		return egressRule{}, errors.New("not a host name, address or prefix")
	}
	r.name = host
	return r, nil
}

func (r egressRule) portOK(port string) bool {
	switch r.port {
	case "":
		return port == "80" || port == "443"
	case "*":
		return true
	default:
		return port == r.port
	}
}

// match returns the rule admitting host:port.
func (p *egressPolicy) match(host, port string) (egressRule, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	addr, addrErr := netip.ParseAddr(strings.Trim(host, "[]"))
	for _, r := range p.rules {
		switch {
		case r.any:
			return r, true
		case !r.portOK(port):
		case r.prefix.IsValid():
			if addrErr == nil && r.prefix.Contains(addr.Unmap()) {
				return r, true
			}
		case addrErr == nil:
		case r.suffix:
			if strings.HasSuffix(host, "."+r.name) {
				return r, true
			}
		case host == r.name:
			return r, true
		}
	}
	return egressRule{}, false
}

// Addresses refused whatever the allowlist says: cloud metadata services
// outside the link-local range.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"),   // Azure wire server
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
}

var sharedRange = netip.MustParsePrefix("100.64.0.0/10")

// refuseAddr says why a dial to a may not happen, or "" when it may. r is
// the rule that admitted the host.
func (p *egressPolicy) refuseAddr(a netip.Addr, r egressRule) string {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return "cloud metadata address " + a.String()
		}
	}
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
		return "link-local address " + a.String()
	}
	if a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "unroutable address " + a.String()
	}
	private := a.IsLoopback() || a.IsPrivate() || sharedRange.Contains(a)
	if private && !p.allowPrivate && !r.prefix.IsValid() {
		return "name resolves to the private address " + a.String()
	}
	return ""
}

// refusal is a dial the policy refused.
type refusal struct{ reason string }

func (e *refusal) Error() string { return e.reason }

// dial connects to host:port when the policy admits it. Names are resolved
// here and every address is checked before it is dialled, so a name that
// later resolves elsewhere (DNS rebinding) cannot reach a refused address.
func (p *egressPolicy) dial(ctx context.Context, host, port string) (net.Conn, error) {
	r, ok := p.match(host, port)
	if !ok {
		return nil, &refusal{reason: "host not in the allowlist"}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = p.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	var errs []error
	for _, a := range addrs {
		if why := p.refuseAddr(a, r); why != "" {
			errs = append(errs, &refusal{reason: why})
			continue
		}
		c, err := p.dialer.DialContext(ctx, "tcp", net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	// A refusal explains more than a dial error when both happened.
	for _, err := range errs {
		var ref *refusal
		if errors.As(err, &ref) {
			return nil, err
		}
	}
	return nil, errors.Join(errs...)
}

// dialAddr is dial for an http.Transport: addr is "host:port".
func (p *egressPolicy) dialAddr(ctx context.Context, _, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, host, port)
}

// guardedHTTPClient is the default client for Files given by URL: any host,
// but no loopback, private, link-local or metadata address.
func guardedHTTPClient() *http.Client {
	p := &egressPolicy{rules: []egressRule{{any: true}}, resolver: net.DefaultResolver, dialer: net.Dialer{Timeout: 15 * time.Second}}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialAddr,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{Transport: t, Timeout: 5 * time.Minute}
}

// maxEgressEvents caps the events a proxy keeps between two takes.
const maxEgressEvents = 1000

// proxy is the egress proxy of one sandbox, listening on a Unix socket in a
// directory that is mounted read-only into the sandbox.
type proxy struct {
	policy *egressPolicy
	log    *slog.Logger
	dir    string
	ln     net.Listener
	srv    *http.Server
	rp     *httputil.ReverseProxy

	mu      sync.Mutex
	events  []EgressEvent
	dropped int
	tunnels map[net.Conn]struct{}
	closed  bool
}

const proxySocket = "proxy.sock"

func startProxy(e Egress, log *slog.Logger) (*proxy, error) {
	pol, err := newEgressPolicy(e)
	if err != nil {
		return nil, err
	}
	// A short path: a Unix socket's path is limited to 107 bytes.
	dir, err := os.MkdirTemp("", "swebox-egress-")
	if err != nil {
		return nil, fmt.Errorf("create proxy directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("create proxy directory: %w", err), os.RemoveAll(dir))
	}
	sock := filepath.Join(dir, proxySocket)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen on proxy socket: %w", err), os.RemoveAll(dir))
	}
	// The sandbox's user must be able to connect.
	if err := os.Chmod(sock, 0o666); err != nil {
		return nil, errors.Join(fmt.Errorf("open proxy socket: %w", err), ln.Close(), os.RemoveAll(dir))
	}
	p := &proxy{policy: pol, log: log, dir: dir, ln: ln, tunnels: map[net.Conn]struct{}{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           pol.dialAddr,
			ResponseHeaderTimeout: 2 * time.Minute,
			MaxIdleConnsPerHost:   4,
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var ref *refusal
			if errors.As(err, &ref) {
				if flag, ok := r.Context().Value(refusedKey{}).(*bool); ok {
					*flag = true
				}
				p.refuse(w, r.Method, r.URL.Hostname(), portOf(r.URL.Port(), "80"), ref.reason)
				return
			}
			http.Error(w, "swebox egress proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func portOf(port, def string) string {
	if port == "" {
		return def
	}
	return port
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "swebox egress proxy: only CONNECT and absolute http:// requests are proxied", http.StatusBadRequest)
		return
	}
	host, port := r.URL.Hostname(), portOf(r.URL.Port(), "80")
	if _, ok := p.policy.match(host, port); !ok {
		p.refuse(w, r.Method, host, port, "host not in the allowlist")
		return
	}
	// The address check happens when the transport dials; the error
	// handler flags a refusal, which it records itself.
	var refused bool
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), refusedKey{}, &refused)))
	if !refused {
		p.record(EgressEvent{Method: r.Method, Host: host, Port: port, Allowed: true})
	}
}

type refusedKey struct{}

func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "swebox egress proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	up, err := p.policy.dial(r.Context(), host, port)
	if err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			p.refuse(w, r.Method, host, port, ref.reason)
			return
		}
		p.record(EgressEvent{Method: r.Method, Host: host, Port: port, Allowed: true, Reason: err.Error()})
		http.Error(w, "swebox egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	p.record(EgressEvent{Method: r.Method, Host: host, Port: port, Allowed: true})
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "swebox egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		down.Close()
		up.Close()
		return
	}
	defer p.untrack(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Bytes the client sent after its request are in the buffer.
		_, _ = io.Copy(up, brw.Reader)
		closeWrite(up)
	}()
	_, _ = io.Copy(down, up)
	closeWrite(down)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnels, c)
		c.Close()
	}
}

func (p *proxy) refuse(w http.ResponseWriter, method, host, port, reason string) {
	p.record(EgressEvent{Method: method, Host: host, Port: port, Reason: reason})
	w.Header().Set("X-Swebox-Egress", "refused")
	http.Error(w, fmt.Sprintf("swebox egress proxy: %s:%s refused: %s", host, port, reason), http.StatusForbidden)
}

func (p *proxy) record(ev EgressEvent) {
	ev.Time = time.Now()
	if ev.Allowed {
		p.log.Debug("egress allowed", "method", ev.Method, "host", ev.Host, "port", ev.Port)
	} else {
		p.log.Warn("egress refused", "method", ev.Method, "host", ev.Host, "port", ev.Port, "reason", ev.Reason)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.events) >= maxEgressEvents {
		p.dropped++
		return
	}
	p.events = append(p.events, ev)
}

// take returns the events recorded since the last take.
func (p *proxy) take() []EgressEvent {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events
	p.events, p.dropped = nil, 0
	return ev
}

// Close stops the proxy, cuts open tunnels and removes the socket.
func (p *proxy) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, os.RemoveAll(p.dir))
}
