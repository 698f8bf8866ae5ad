package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokensFlag(t *testing.T) {
	const a, b = "alice-0123456789abcdef0123456789abcdef", "bob-0123456789abcdef0123456789abcdef01"
	type testCase struct {
		name, file string
		args       []string
		want       []string // client names
		err        string
	}
	for _, tc := range []testCase{
		{name: "two clients, comments and blank lines", file: "# who\nalice " + a + "\n\n  bob\t" + b + "  \n", want: []string{"alice", "bob"}},
		{name: "short token", file: "alice " + a + "\nbob 0123456789\n", err: ":2: the token of bob has 10 characters; one shorter than 32 can be guessed"},
		{name: "three fields", file: "alice " + a + " extra\n", err: ":1: want NAME TOKEN, got 3 fields"},
		{name: "bad name", file: "al:ice " + a + "\n", err: `:1: client name "al:ice"`},
		{name: "same name twice", file: "alice " + a + "\nalice " + b + "\n", err: ":2: client alice is already named on line 1"},
		{name: "same token twice", file: "alice " + a + "\nbob " + a + "\n", err: ":2: the token of bob is already on line 1"},
		{name: "empty", file: "# nobody\n", err: "no client in the file"},
		{name: "with --token", file: "alice " + a + "\n", args: []string{"--token", b}, err: "give --token or --tokens, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tokens")
			require.NoError(t, os.WriteFile(p, []byte(tc.file), 0o600))
			cfg, err := parseFlags(append(tc.args, "--tokens", p), func(string) string { return "" }, io.Discard)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), a[6:], "errors never show a token")
				return
			}
			require.NoError(t, err)
			var names []string
			for _, c := range cfg.Clients {
				names = append(names, c.name)
			}
			assert.Equal(t, tc.want, names)
			name, ok := lookup(cfg.Clients, "Bearer "+b)
			assert.True(t, ok)
			assert.Equal(t, "bob", name)
			_, ok = lookup(cfg.Clients, "Bearer "+b[:len(b)-1])
			assert.False(t, ok, "a prefix of a token is no token")
			_, ok = lookup(cfg.Clients, b)
			assert.False(t, ok, "a token without the scheme is refused")
		})
	}
	cfg, err := parseFlags([]string{"--client_idle", "90"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, cfg.ClientIdle)
	_, err = parseFlags([]string{"--tokens", filepath.Join(t.TempDir(), "missing")}, func(string) string { return "" }, io.Discard)
	assert.ErrorContains(t, err, "--tokens")
}

func TestOwnerAndRouting(t *testing.T) {
	assert.Equal(t, stdioOwner, ownerOf(nil, nil), "stdio: one client")
	assert.Equal(t, stdioOwner, ownerOf(nil, &mcp.RequestExtra{}))
	assert.Equal(t, "client:alice", ownerOf(nil, &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "alice"}}),
		"no MCP session: the token's client")

	hit := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, name) })
	}
	h := byProtocol(hit("stateful"), hit("stateless"))
	for _, tc := range []struct{ version, want string }{
		{"", "stateful"}, {"2025-03-26", "stateful"}, {"2025-11-25", "stateful"},
		{"2026-07-28", "stateless"}, {"2027-01-01", "stateless"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tc.version != "" {
			req.Header.Set("Mcp-Protocol-Version", tc.version)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, tc.want, rec.Body.String(), "version %q", tc.version)
	}
}
