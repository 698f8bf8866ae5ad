package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionWriteFileFromURL: session_write_file fetches a URL into the
// session's mounts/; a host of --fetch_allow is fetched at its loopback
// address, any other loopback URL is refused, and so are a file larger than
// --fetch_limit, a redirect from an allowed host to a refused one, and a
// URL that answers 404.
func TestSessionWriteFileFromURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/data/in.csv":
			_, _ = w.Write([]byte("a,b\n1,2\n"))
		case "/big.bin":
			_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
		case "/redirect":
			http.Redirect(w, r, "http://localhost:"+r.URL.Port()+"/data/in.csv", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	c := engine(t)
	s := startStdio(t, baseArgs(c, "--fetch_allow", u.Host, "--fetch_limit", "1KiB"), nil)
	info, _ := callOK[sessionInfoOut](t, s.cs, "session_create", map[string]any{})

	out, _ := callOK[sessionWriteOut](t, s.cs, "session_write_file", map[string]any{"session": info.Session, "path": "in.csv", "url": srv.URL + "/data/in.csv"})
	assert.Equal(t, sessionWriteOut{Path: "mounts/in.csv", Size: 8}, out)
	run, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "cat mounts/in.csv"})
	assert.Equal(t, "a,b\n1,2\n", run.Stdout, "the fetched file is in the sandbox")

	type testCase struct {
		name, url, want string
	}
	for _, tc := range []testCase{
		{name: "loopback host not allowed", url: "http://localhost:" + u.Port() + "/data/in.csv", want: "could not be fetched"},
		{name: "larger than --fetch_limit", url: srv.URL + "/big.bin", want: "more than 1024 bytes"},
		{name: "redirect to a host not allowed", url: srv.URL + "/redirect", want: "could not be fetched"},
		{name: "not found", url: srv.URL + "/missing", want: "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := callErr(t, s.cs, "session_write_file", map[string]any{"session": info.Session, "path": "refused.bin", "url": tc.url})
			assert.Contains(t, msg, tc.want)
			run, _ := callOK[runOutput](t, s.cs, "session_exec", map[string]any{"session": info.Session, "command": "ls mounts"})
			assert.Equal(t, "in.csv\n", run.Stdout, "nothing was written")
		})
	}

	// Without --fetch_allow, the same loopback URL is refused.
	plain := startStdio(t, baseArgs(c, "--name", c.Session()+"-plain"), nil)
	other, _ := callOK[sessionInfoOut](t, plain.cs, "session_create", map[string]any{})
	msg := callErr(t, plain.cs, "session_write_file", map[string]any{"session": other.Session, "path": "in.csv", "url": srv.URL + "/data/in.csv"})
	assert.Contains(t, msg, "could not be fetched")
	require.NoError(t, plain.cs.Close())
}
