package egress

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
	"runtime"
	"strings"
	"sync"
	"time"
)

// Allowlist names the hosts a sandbox may reach through the proxy.
type Allowlist struct {
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

// Enabled reports whether a grants any access.
func (a Allowlist) Enabled() bool { return len(a.Hosts) > 0 }

// Validate reports the first entry of Hosts that is not a host name, an
// address or a prefix, as a *RuleError.
func (a Allowlist) Validate() error {
	_, err := newPolicy(a)
	return err
}

// Event is one request the proxy answered.
type Event struct {
	Time    time.Time
	Method  string // "CONNECT" or the HTTP method of a plain request
	Host    string
	Port    string
	Allowed bool
	Reason  string // why it was refused
}

// rule is one parsed entry of Allowlist.Hosts.
type rule struct {
	name   string       // lower-case host name; empty for an address rule
	suffix bool         // "*.name": subdomains only
	prefix netip.Prefix // address rules
	port   string       // "" for 80 and 443, "*" for any, else one port
	any    bool         // matches every host (the fetch client's rule)
}

type policy struct {
	rules        []rule
	allowPrivate bool
	resolver     *net.Resolver
	dialer       net.Dialer
}

func newPolicy(a Allowlist) (*policy, error) {
	p := &policy{allowPrivate: a.AllowPrivate, resolver: net.DefaultResolver, dialer: net.Dialer{Timeout: 15 * time.Second}}
	for _, h := range a.Hosts {
		r, err := parseRule(h)
		if err != nil {
			return nil, &RuleError{Entry: h, Reason: err.Error()}
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseRule(s string) (rule, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return rule{}, errors.New("empty entry")
	}
	if pfx, err := netip.ParsePrefix(s); err == nil {
		return rule{prefix: pfx.Masked()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return rule{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())}, nil
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
		if port != "*" {
			if _, err := netip.ParseAddrPort("0.0.0.0:" + port); err != nil {
				return rule{}, fmt.Errorf("bad port %q", port)
			}
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return rule{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port}, nil
	}
	r := rule{port: port}
	if strings.HasPrefix(host, "*.") {
		r.suffix, host = true, host[2:]
	}
	if host == "" || strings.ContainsAny(host, "*/@ ") || strings.Trim(host, ".") != host {
		return rule{}, errors.New("not a host name, address or prefix")
	}
	r.name = host
	return r, nil
}

func (r rule) portOK(port string) bool {
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
func (p *policy) match(host, port string) (rule, bool) {
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
	return rule{}, false
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
func (p *policy) refuseAddr(a netip.Addr, r rule) string {
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
func (p *policy) dial(ctx context.Context, host, port string) (net.Conn, error) {
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
func (p *policy) dialAddr(ctx context.Context, _, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return p.dial(ctx, host, port)
}

// PublicClient returns an HTTP client that reaches any host, but never a
// loopback, private, shared, link-local or cloud metadata address, whatever
// a name resolves to: a client for URLs that untrusted input names, which
// must not reach the host's own services.
func PublicClient() *http.Client {
	p := &policy{rules: []rule{{any: true}}, resolver: net.DefaultResolver, dialer: net.Dialer{Timeout: 15 * time.Second}}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialAddr,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{Transport: t, Timeout: 5 * time.Minute}
}

// DefaultMaxEvents caps the events a proxy keeps between two calls of
// Proxy.Events.
const DefaultMaxEvents = 1000

// SocketName is the base name of the proxy's socket in Proxy.Dir.
const SocketName = "proxy.sock"

type config struct {
	log       *slog.Logger
	dir       string
	maxEvents int
}

// Option configures a Proxy.
type Option func(*config) error

// WithLogger sets where the proxy logs the requests it allows (at debug
// level) and refuses (at warn level). Default: a logger that discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		c.log = l
		return nil
	}
}

// WithParentDir makes the proxy create its socket directory in dir. A Unix
// socket's address holds about 100 bytes of path: on Linux a longer one is
// bound through the directory's handle (listenUnix), elsewhere Start fails,
// so dir should be short there. Default: os.TempDir().
func WithParentDir(dir string) Option {
	return func(c *config) error {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("WithParentDir: %q is not an absolute path", dir)
		}
		c.dir = dir
		return nil
	}
}

// WithMaxEvents caps the events kept between two calls of Proxy.Events;
// later ones are counted as dropped. Default: DefaultMaxEvents.
func WithMaxEvents(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxEvents: %d is not positive", n)
		}
		c.maxEvents = n
		return nil
	}
}

// Proxy is an HTTP proxy on a Unix socket that admits the hosts of an
// Allowlist only. It serves CONNECT (for HTTPS and any TCP protocol) and
// absolute http:// requests; everything else is refused with status 403 and
// recorded. Names are resolved by the proxy and every address is checked
// before it is dialled, so a name that resolves elsewhere later (DNS
// rebinding) cannot reach a refused address. Its methods are safe for
// concurrent use.
type Proxy struct {
	policy    *policy
	log       *slog.Logger
	dir       string
	ln        net.Listener
	srv       *http.Server
	rp        *httputil.ReverseProxy
	maxEvents int

	mu      sync.Mutex
	events  []Event
	dropped int
	tunnels map[net.Conn]struct{}
	closed  bool
}

// Start validates allow (a bad entry is a *RuleError) and serves on a Unix
// socket, SocketName in a fresh directory, until Close. Any user may connect
// to the socket (mode 0666), so that a sandbox's user can.
func Start(allow Allowlist, opts ...Option) (*Proxy, error) {
	cfg := config{log: slog.New(slog.DiscardHandler), maxEvents: DefaultMaxEvents}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("egress: %w", err)
		}
	}
	pol, err := newPolicy(allow)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.dir, "swebox-egress-")
	if err != nil {
		return nil, fmt.Errorf("create proxy directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("create proxy directory: %w", err), os.RemoveAll(dir))
	}
	sock := filepath.Join(dir, SocketName)
	ln, err := listenUnix(sock)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen on proxy socket: %w", err), os.RemoveAll(dir))
	}
	// The sandbox's user must be able to connect.
	if err := os.Chmod(sock, 0o666); err != nil {
		return nil, errors.Join(fmt.Errorf("open proxy socket: %w", err), ln.Close(), os.RemoveAll(dir))
	}
	p := &Proxy{policy: pol, log: cfg.log, dir: dir, ln: ln, maxEvents: cfg.maxEvents, tunnels: map[net.Conn]struct{}{}}
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
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Dir is the directory holding the socket, to be mounted (read-only will
// do) into a sandbox.
func (p *Proxy) Dir() string { return p.dir }

// Socket is the path of the proxy's Unix socket.
func (p *Proxy) Socket() string { return filepath.Join(p.dir, SocketName) }

func portOf(port, def string) string {
	if port == "" {
		return def
	}
	return port
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
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
		p.record(Event{Method: r.Method, Host: host, Port: port, Allowed: true})
	}
}

type refusedKey struct{}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
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
		p.record(Event{Method: r.Method, Host: host, Port: port, Allowed: true, Reason: err.Error()})
		http.Error(w, "swebox egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	p.record(Event{Method: r.Method, Host: host, Port: port, Allowed: true})
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

func (p *Proxy) track(cs ...net.Conn) bool {
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

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnels, c)
		c.Close()
	}
}

func (p *Proxy) refuse(w http.ResponseWriter, method, host, port, reason string) {
	p.record(Event{Method: method, Host: host, Port: port, Reason: reason})
	w.Header().Set("X-Swebox-Egress", "refused")
	http.Error(w, fmt.Sprintf("swebox egress proxy: %s:%s refused: %s", host, port, reason), http.StatusForbidden)
}

func (p *Proxy) record(ev Event) {
	ev.Time = time.Now()
	if ev.Allowed {
		p.log.Debug("egress allowed", "method", ev.Method, "host", ev.Host, "port", ev.Port)
	} else {
		p.log.Warn("egress refused", "method", ev.Method, "host", ev.Host, "port", ev.Port, "reason", ev.Reason)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.events) >= p.maxEvents {
		p.dropped++
		return
	}
	p.events = append(p.events, ev)
}

// Events returns the requests answered since the last call, in order, and
// how many more were not kept (past the cap of WithMaxEvents). A nil Proxy
// has none.
func (p *Proxy) Events() (events []Event, dropped int) {
	if p == nil {
		return nil, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	events, dropped = p.events, p.dropped
	p.events, p.dropped = nil, 0
	return events, dropped
}

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (sun_path's 108 bytes, its terminating NUL included).
const maxSocketPath = 107

// listenUnix listens on a Unix socket at sock. On Linux a path longer than
// a socket address holds (a deep TMPDIR: the MCP server's own is
// $TMPDIR/swebox-mcp-<name>/run-<n>/tmp, over the limit for a home
// directory's TMPDIR and a test's server name) is bound through the
// directory's handle, /proc/self/fd/<n>/<name>, the same directory in a
// few bytes. The handle is closed once the socket exists, so the listener
// must not unlink by that name on Close: the caller removes the directory.
func listenUnix(sock string) (net.Listener, error) {
	if len(sock) <= maxSocketPath || runtime.GOOS != "linux" {
		return net.Listen("unix", sock)
	}
	d, err := os.Open(filepath.Dir(sock))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(sock)))
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}

// Close stops the proxy, cuts open tunnels and removes the socket's
// directory. Safe to call twice, and on a nil Proxy.
func (p *Proxy) Close() error {
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
