package egress_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/swebox/swebox/agent/egress"
)

func ExampleStart() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	defer srv.Close()

	px, err := egress.Start(egress.Allowlist{Hosts: []string{srv.Listener.Addr().String()}})
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()

	// A client that reaches the world through the proxy's socket only, as
	// a sandbox's relay does.
	c := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", px.Socket())
		},
	}}
	for _, u := range []string{srv.URL, "http://169.254.169.254/latest/meta-data/"} {
		resp, err := c.Get(u)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	events, _ := px.Events()
	for _, ev := range events {
		if ev.Allowed {
			fmt.Println(ev.Method, "allowed")
		} else {
			fmt.Println(ev.Method, "refused:", ev.Reason)
		}
	}
	// Output:
	// 200
	// 403
	// GET allowed
	// GET refused: host not in the allowlist
}
