package main

import (
	"bufio"
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An HTTP server's clients are its bearer tokens, each with a name: the one
// of --token (or SWEBOX_MCP_TOKEN, or a generated one) is "default", those
// of --tokens FILE are named there. The name is who owns what a client of
// protocol 2026-07-28 creates, since that protocol has no MCP session.

// defaultClient names the client of --token.
const defaultClient = "default"

// clientOwnerPrefix starts the owner of what a stateless (2026-07-28)
// client creates: "client:" and the token's name. The owners of a stateful
// client (its MCP session id) and of stdio ("stdio") never contain ':'.
const clientOwnerPrefix = "client:"

// clientToken is one client's name and token.
type clientToken struct {
	name  string
	token []byte
}

// clientName is the form of a client's name in a tokens file.
var clientName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// readTokens reads a tokens file: one client a line, "NAME TOKEN", with
// blank lines and lines starting with '#' skipped. Names and tokens are
// unique, and every token has at least minTokenLen characters. Errors name
// the file and line, never a token.
func readTokens(path string) ([]clientToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--tokens: %w", err)
	}
	defer f.Close()
	var out []clientToken
	names, tokens := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) != 2:
			return nil, fmt.Errorf("--tokens %s:%d: want NAME TOKEN, got %d fields", path, n, len(fields))
		case !clientName.MatchString(fields[0]):
			return nil, fmt.Errorf("--tokens %s:%d: client name %q: use letters, digits, '.', '_' and '-' (at most 64)", path, n, fields[0])
		case len(fields[1]) < minTokenLen:
			return nil, fmt.Errorf("--tokens %s:%d: the token of %s has %d characters; one shorter than %d can be guessed: make one with `openssl rand -hex 32`", path, n, fields[0], len(fields[1]), minTokenLen)
		}
		if prev, ok := names[fields[0]]; ok {
			return nil, fmt.Errorf("--tokens %s:%d: client %s is already named on line %d", path, n, fields[0], prev)
		}
		if prev, ok := tokens[fields[1]]; ok {
			return nil, fmt.Errorf("--tokens %s:%d: the token of %s is already on line %d; each client needs its own", path, n, fields[0], prev)
		}
		names[fields[0]], tokens[fields[1]] = n, n
		out = append(out, clientToken{name: fields[0], token: []byte(fields[1])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--tokens %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tokens %s: no client in the file", path)
	}
	return out, nil
}

// lookup returns the name of the client whose token the Authorization
// header carries. Every token is compared, in constant time each, so that
// the answer's timing tells nothing of which one came close.
func lookup(clients []clientToken, header string) (string, bool) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	name := ""
	for _, c := range clients {
		if subtle.ConstantTimeCompare([]byte(tok), c.token) == 1 {
			name = c.name
		}
	}
	return name, name != ""
}

// requireToken answers 401 to every request without one of the clients'
// bearer tokens, before the MCP handler sees it, and hands the client's
// name on as the request's token info (mcp.RequestExtra.TokenInfo.UserID).
// The SDK's stateful handler records it with each MCP session and refuses
// the session to any other client's token.
func requireToken(clients []clientToken, next http.Handler) http.Handler {
	withInfo := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		name, ok := lookup(clients, r.Header.Get("Authorization"))
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: name}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := lookup(clients, r.Header.Get("Authorization")); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="swebox"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		withInfo.ServeHTTP(w, r)
	})
}

// ownerOf is who a request comes from: the MCP session of a stateful HTTP
// client (2025-11-25 and earlier), the token's client for a stateless one
// (2026-07-28, no MCP session), the one client of a stdio server.
func ownerOf(ss *mcp.ServerSession, extra *mcp.RequestExtra) string {
	if ss != nil && ss.ID() != "" {
		return ss.ID()
	}
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return clientOwnerPrefix + extra.TokenInfo.UserID
	}
	return stdioOwner
}

// protocolStateless is the first protocol version without MCP sessions.
const protocolStateless = "2026-07-28"

// protocolVersions are the versions the server speaks, newest first.
var protocolVersions = []string{protocolStateless, "2025-11-25", "2025-06-18", "2025-03-26"}

// byProtocol sends requests of protocol 2026-07-28 and later (their
// Mcp-Protocol-Version header, which the SDK's client sends on each) to the
// stateless handler, and every other to the stateful one, which keeps MCP
// sessions for the handshake-era versions. The SDK compares versions as
// strings too: they are dates.
func byProtocol(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= protocolStateless {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}
