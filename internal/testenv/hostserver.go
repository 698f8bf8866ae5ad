package testenv

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// HostIP is an address of this machine other than loopback, so that a
// server bound to it is reachable from the host (and from a sandbox only
// through an egress proxy), and a sandbox trying it directly is not
// stopped merely by its own loopback. Falls back to 127.0.0.1.
func HostIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return "127.0.0.1"
}

// ServeOn starts a server on ip:0 (TLS when tls is set) that answers every
// request with body; it closes when the test ends.
func ServeOn(t testing.TB, ip, body string, tls bool) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
	}))
	srv.Listener = ln
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}
