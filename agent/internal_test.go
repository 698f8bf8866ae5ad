package agent

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

func TestEgressRuleMatch(t *testing.T) {
	type testCase struct {
		name  string
		hosts []string
		host  string
		port  string
		want  bool
	}
	for _, tc := range []testCase{
		{name: "name on 443", hosts: []string{"example.com"}, host: "example.com", port: "443", want: true},
		{name: "name on 80", hosts: []string{"example.com"}, host: "EXAMPLE.com.", port: "80", want: true},
		{name: "name on another port", hosts: []string{"example.com"}, host: "example.com", port: "22"},
		{name: "name with its port", hosts: []string{"example.com:8443"}, host: "example.com", port: "8443", want: true},
		{name: "name with any port", hosts: []string{"example.com:*"}, host: "example.com", port: "5432", want: true},
		{name: "subdomain is not the name", hosts: []string{"example.com"}, host: "api.example.com", port: "443"},
		{name: "wildcard subdomain", hosts: []string{"*.example.com"}, host: "api.example.com", port: "443", want: true},
		{name: "wildcard is not the apex", hosts: []string{"*.example.com"}, host: "example.com", port: "443"},
		{name: "suffix trick", hosts: []string{"*.example.com"}, host: "evilexample.com", port: "443"},
		{name: "address", hosts: []string{"203.0.113.7"}, host: "203.0.113.7", port: "443", want: true},
		{name: "address with port", hosts: []string{"203.0.113.7:9000"}, host: "203.0.113.7", port: "9000", want: true},
		{name: "prefix", hosts: []string{"10.0.0.0/8"}, host: "10.1.2.3", port: "80", want: true},
		{name: "ipv6 with port", hosts: []string{"[2001:db8::1]:8080"}, host: "2001:db8::1", port: "8080", want: true},
		{name: "a name does not match an address", hosts: []string{"example.com"}, host: "93.184.216.34", port: "443"},
		{name: "nothing listed", host: "example.com", port: "443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newEgressPolicy(Egress{Hosts: tc.hosts})
			require.NoError(t, err)
			_, ok := p.match(tc.host, tc.port)
			assert.Equal(t, tc.want, ok)
		})
	}
}

func TestEgressRuleErrors(t *testing.T) {
	for _, h := range []string{"", "exa mple.com", "*", "a*b.com", "example.com:99999", "user@example.com", ".example.com"} {
		_, err := newEgressPolicy(Egress{Hosts: []string{h}})
		assert.ErrorIs(t, err, ErrInvalidOption, h)
	}
}

func TestRefuseAddr(t *testing.T) {
	type testCase struct {
		name         string
		addr         string
		rule         string
		allowPrivate bool
		refused      bool
	}
	for _, tc := range []testCase{
		{name: "public address by name", addr: "93.184.216.34", rule: "example.com"},
		{name: "metadata even when listed", addr: "169.254.169.254", rule: "169.254.169.254", refused: true},
		{name: "link-local even with AllowPrivate", addr: "169.254.1.1", rule: "x.com", allowPrivate: true, refused: true},
		{name: "mapped metadata address", addr: "::ffff:169.254.169.254", rule: "x.com", refused: true},
		{name: "azure wire server", addr: "168.63.129.16", rule: "168.63.129.16", refused: true},
		{name: "aws ipv6 metadata", addr: "fd00:ec2::254", rule: "x.com", allowPrivate: true, refused: true},
		{name: "ipv6 link-local", addr: "fe80::1", rule: "x.com", refused: true},
		{name: "unspecified", addr: "0.0.0.0", rule: "x.com", refused: true},
		{name: "name resolving to loopback", addr: "127.0.0.1", rule: "x.com", refused: true},
		{name: "name resolving to private", addr: "10.0.0.5", rule: "x.com", refused: true},
		{name: "name resolving to shared", addr: "100.64.0.1", rule: "x.com", refused: true},
		{name: "name resolving to private, allowed", addr: "10.0.0.5", rule: "x.com", allowPrivate: true},
		{name: "listed private address", addr: "127.0.0.1", rule: "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newEgressPolicy(Egress{Hosts: []string{tc.rule}, AllowPrivate: tc.allowPrivate})
			require.NoError(t, err)
			r, err := parseEgressRule(tc.rule)
			require.NoError(t, err)
			why := p.refuseAddr(netip.MustParseAddr(tc.addr), r)
			assert.Equal(t, tc.refused, why != "", why)
		})
	}
}

// TestProxy drives the proxy over its Unix socket, as the in-sandbox relay
// does, without a container.
func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello "+r.URL.Path) }))
	t.Cleanup(srv.Close)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "secure") }))
	t.Cleanup(tls.Close)
	px, err := startProxy(Egress{Hosts: []string{srv.Listener.Addr().String(), tls.Listener.Addr().String()}}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	sock := filepath.Join(px.dir, proxySocket)
	viaProxy := func(base *http.Transport) *http.Client {
		base.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"})
		base.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}
		return &http.Client{Transport: base}
	}
	c := viaProxy(&http.Transport{})
	type testCase struct {
		name     string
		client   *http.Client
		url      string
		wantCode int
		wantBody string
	}
	tlsTransport := tls.Client().Transport.(*http.Transport).Clone()
	for _, tc := range []testCase{
		{name: "plain http, listed", client: c, url: srv.URL + "/a", wantCode: 200, wantBody: "hello /a"},
		{name: "connect, listed", client: viaProxy(tlsTransport), url: tls.URL, wantCode: 200, wantBody: "secure"},
		{name: "plain http, other port", client: c, url: "http://127.0.0.1:1/", wantCode: 403},
		{name: "metadata", client: c, url: "http://169.254.169.254/", wantCode: 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.client.Get(tc.url)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.wantCode, resp.StatusCode, string(body))
			if tc.wantBody != "" {
				assert.Equal(t, tc.wantBody, string(body))
			}
		})
	}
	// A request that is not proxy-shaped.
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err)
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 12)
	_, _ = io.ReadFull(conn, buf)
	conn.Close()
	assert.Equal(t, "HTTP/1.1 400", string(buf))

	events := px.take()
	require.Len(t, events, 4)
	assert.Empty(t, px.take(), "take empties the log")
	require.NoError(t, px.Close())
	require.NoError(t, px.Close(), "Close twice")
	assert.NoDirExists(t, px.dir)
}

func TestMasker(t *testing.T) {
	mk := newMasker(map[string]string{"A": "secret-one", "B": "secret-one-longer", "C": ""})
	assert.Equal(t, "x *** y *** z", mk.string("x secret-one-longer y secret-one z"), "the longer secret is masked whole")
	assert.Equal(t, "no secrets", mk.string("no secrets"))

	type testCase struct {
		name string
		in   sandbox.Output
		want sandbox.Output
	}
	for _, tc := range []testCase{
		{name: "whole", in: sandbox.Output{Head: []byte("a secret-one b"), Total: 14}, want: sandbox.Output{Head: []byte("a *** b"), Total: 14}},
		{name: "cut in the middle", in: sandbox.Output{Head: []byte("abc secr"), Tail: []byte("et-one-longer z"), Truncated: true, Dropped: 5, Total: 30},
			want: sandbox.Output{Head: []byte("abc ***"), Tail: []byte("*** z"), Truncated: true, Dropped: 5, Total: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, mk.output(tc.in))
		})
	}
	assert.Equal(t, sandbox.Output{Head: []byte("x")}, masker{}.output(sandbox.Output{Head: []byte("x")}))
}

func TestRequirementsMerge(t *testing.T) {
	base := Requirements{Packages: []string{"a", "b"}, WheelDir: "/w1"}
	got := base.merge(Requirements{Packages: []string{"b", "c"}})
	assert.Equal(t, []string{"a", "b", "c"}, got.Packages)
	assert.Equal(t, "/w1", got.WheelDir, "no new source keeps the old one")
	got = base.merge(Requirements{Packages: []string{"d"}, WheelDir: "/w2"})
	assert.Equal(t, "/w2", got.WheelDir)
	assert.Equal(t, []string{"a", "b"}, base.Packages, "merge does not change its receiver")
}
