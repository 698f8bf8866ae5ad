package testenv

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RateLimitMessage is Docker Hub's answer to a pull over its rate limit, as
// the engine passes it on.
const RateLimitMessage = "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit"

// FaultyEngine is an HTTP proxy in front of a real engine that answers image
// pulls itself, so that a test can make a registry refuse them: every other
// request, hijacked exec and attach streams included, goes to the engine.
type FaultyEngine struct {
	host  string
	delay atomic.Pointer[execDelay]

	mu     sync.Mutex
	counts map[string]*atomic.Int64 // CountExecs
}

type execDelay struct {
	match string
	d     time.Duration
}

// DelayExecs holds back, by d, the creation of every exec whose request
// (command, environment) contains match, as a loaded engine is slow to start
// a command. A zero d stops delaying.
func (f *FaultyEngine) DelayExecs(match string, d time.Duration) {
	if d == 0 {
		f.delay.Store(nil)
		return
	}
	f.delay.Store(&execDelay{match: match, d: d})
}

// CountExecs counts, from now on, the execs created whose request (command,
// environment) contains match; it returns how many so far.
func (f *FaultyEngine) CountExecs(match string) func() int {
	n := &atomic.Int64{}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]*atomic.Int64{}
	}
	f.counts[match] = n
	return func() int { return int(n.Load()) }
}

// execCreated counts an exec created with the request body.
func (f *FaultyEngine) execCreated(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for match, n := range f.counts {
		if strings.Contains(body, match) {
			n.Add(1)
		}
	}
}

// NewFaultyEngine listens on a unix socket in a temporary directory and
// forwards to engineHost (unix:// or tcp://). pull decides each image pull
// (POST /images/create) by image reference ("name:tag", as given to the
// client, without the docker.io/ the client adds): it returns true
// to answer it as the engine does when the registry rate-limits the pull
// (status 500, RateLimitMessage), false to answer it as a pull that
// succeeded (pull must then have put the image on the engine). The proxy
// stops when the test ends.
func NewFaultyEngine(t testing.TB, engineHost string, pull func(ref string) (limited bool)) *FaultyEngine {
	t.Helper()
	proto, addr, ok := strings.Cut(engineHost, "://")
	require.True(t, ok, "engine host %q", engineHost)
	if proto == "http" || proto == "https" {
		proto = "tcp"
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: "http", Host: "docker"})
			r.Out.Host = "docker"
		},
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, proto, addr)
		}},
		FlushInterval: -1, // progress streams and logs as they come
	}
	f := &FaultyEngine{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/exec") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if dl := f.delay.Load(); dl != nil && strings.Contains(string(body), dl.match) {
				time.Sleep(dl.d)
			}
			f.execCreated(string(body))
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/images/create") {
			q := r.URL.Query()
			ref := strings.TrimPrefix(q.Get("fromImage"), "docker.io/")
			if tag := q.Get("tag"); tag != "" {
				ref += ":" + tag
			}
			w.Header().Set("Content-Type", "application/json")
			if pull(ref) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"message":"` + RateLimitMessage + `"}` + "\n"))
				return
			}
			_, _ = w.Write([]byte(`{"status":"Status: Downloaded newer image for ` + ref + `"}` + "\n"))
			return
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "engine.sock"))
	require.NoError(t, err)
	srv := &http.Server{Handler: handler}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f.host = "unix://" + ln.Addr().String()
	return f
}

// Host is the address to give sandbox.WithHost.
func (f *FaultyEngine) Host() string { return f.host }
