package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// fakeEngine answers the Engine API calls of EnsureImage: the image is
// never local, and a pull gets pull's answer. It stands in for an engine
// whose registry limits pulls, through the real Docker client.
func fakeEngine(t *testing.T, pull http.HandlerFunc) (*sandbox.Client, *atomic.Int32) {
	t.Helper()
	var pulls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			_, _ = w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/images/create"):
			pulls.Add(1)
			pull(w, r)
		case strings.Contains(r.URL.Path, "/images/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"No such image: ` + r.URL.Path + `"}`))
		default:
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotImplemented)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := sandbox.New(sandbox.WithHost("tcp://"+strings.TrimPrefix(srv.URL, "http://")), sandbox.WithAPIVersion("1.41"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, &pulls
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// Each form in which a registry's rate limit reaches the Engine API client
// is ErrRateLimited; other pull failures are not.
func TestPullRateLimitIsTyped(t *testing.T) {
	const hub = "toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit"
	type testCase struct {
		name    string
		pull    http.HandlerFunc
		limited bool
	}
	for _, tc := range []testCase{
		{"error answer with the registry's code", answer(http.StatusInternalServerError, `{"message":"`+hub+`"}`), true},
		{"engine answers 429", answer(http.StatusTooManyRequests, `{"message":"slow down"}`), true},
		{"progress stream error", answer(http.StatusOK, `{"status":"Pulling from library/python"}`+"\n"+`{"errorDetail":{"message":"`+hub+`"},"error":"`+hub+`"}`), true},
		{"containerd store wording", answer(http.StatusInternalServerError, `{"message":"failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/rust/manifests/sha256:de6e: 429 Too Many Requests - Server message: toomanyrequests: limit"}`), true},
		{"not found", answer(http.StatusNotFound, `{"message":"pull access denied for nosuch, repository does not exist"}`), false},
		{"other stream error", answer(http.StatusOK, `{"errorDetail":{"message":"unauthorized: authentication required"}}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, pulls := fakeEngine(t, tc.pull)
			err := c.EnsureImage(context.Background(), sandbox.EnsureImageRequest{Image: "example/limited:1"})
			require.Error(t, err)
			assert.Equal(t, int32(1), pulls.Load(), "the sandbox package pulls once; retrying is the caller's choice")
			var ie *sandbox.ImageError
			require.ErrorAs(t, err, &ie)
			assert.ErrorIs(t, err, sandbox.ErrImageNotFound)
			assert.Equal(t, tc.limited, errors.Is(err, sandbox.ErrRateLimited), err.Error())
			assert.NotErrorIs(t, err, sandbox.ErrEngineUnreachable)
		})
	}
}
