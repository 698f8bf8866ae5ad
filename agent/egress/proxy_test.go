package egress_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent/egress"
)

// TestProxy drives the proxy over its Unix socket, as the in-sandbox relay
// does, without a container.
func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello "+r.URL.Path) }))
	t.Cleanup(srv.Close)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "secure") }))
	t.Cleanup(tls.Close)
	px, err := egress.Start(egress.Allowlist{Hosts: []string{srv.Listener.Addr().String(), tls.Listener.Addr().String()}}, egress.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	sock := px.Socket()
	assert.Equal(t, filepath.Join(px.Dir(), egress.SocketName), sock)
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

	events, dropped := px.Events()
	require.Len(t, events, 4)
	assert.Zero(t, dropped)
	events, _ = px.Events()
	assert.Empty(t, events, "Events empties the log")
	require.NoError(t, px.Close())
	require.NoError(t, px.Close(), "Close twice")
	assert.NoDirExists(t, px.Dir())
}

func TestProxyEventCap(t *testing.T) {
	px, err := egress.Start(egress.Allowlist{Hosts: []string{"example.com"}}, egress.WithMaxEvents(1))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, px.Close()) })
	c := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", px.Socket())
		},
	}}
	for range 3 {
		resp, err := c.Get("http://not-listed.example/")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	}
	events, dropped := px.Events()
	require.Len(t, events, 1)
	assert.Equal(t, "not-listed.example", events[0].Host)
	assert.False(t, events[0].Allowed)
	assert.Equal(t, 2, dropped)
}

func TestStartErrors(t *testing.T) {
	type testCase struct {
		name  string
		allow egress.Allowlist
		opts  []egress.Option
		is    error
	}
	for _, tc := range []testCase{
		{name: "bad entry", allow: egress.Allowlist{Hosts: []string{"a b"}}, is: egress.ErrInvalidRule},
		{name: "nil logger", opts: []egress.Option{egress.WithLogger(nil)}},
		{name: "relative directory", opts: []egress.Option{egress.WithParentDir("tmp")}},
		{name: "zero events", opts: []egress.Option{egress.WithMaxEvents(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			px, err := egress.Start(tc.allow, tc.opts...)
			require.Error(t, err)
			assert.Nil(t, px)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// TestProxyInADeepDirectory: a socket directory whose path is longer than
// a Unix socket address holds (the MCP server's, under a home directory's
// TMPDIR) still gets the proxy on Linux: the socket is at Socket(), a
// client that reaches it through the directory's handle is served, and
// Close removes the directory.
func TestProxyInADeepDirectory(t *testing.T) {
	parent := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	require.NoError(t, os.MkdirAll(parent, 0o700))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "deep") }))
	t.Cleanup(srv.Close)
	px, err := egress.Start(egress.Allowlist{Hosts: []string{srv.Listener.Addr().String()}}, egress.WithParentDir(parent))
	if runtime.GOOS != "linux" {
		require.Error(t, err, "no socket address holds the path")
		return
	}
	require.NoError(t, err)
	require.Greater(t, len(px.Socket()), 108, "the path is longer than a socket address")
	fi, err := os.Stat(px.Socket())
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket, fi.Mode().Type())
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm(), "any user may connect")

	dir, err := os.Open(px.Dir())
	require.NoError(t, err)
	t.Cleanup(func() { dir.Close() })
	c := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), egress.SocketName))
		},
	}}
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "deep", string(body))
	require.NoError(t, px.Close())
	assert.NoDirExists(t, px.Dir())
}
