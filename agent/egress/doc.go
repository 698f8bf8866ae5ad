// Package egress is an allowlisting HTTP proxy on a Unix socket, for
// sandboxes that have no network of their own: a program in the sandbox
// reaches the listed hosts through the proxy's socket (mounted into the
// sandbox) and nothing else. It serves CONNECT, for HTTPS and any other TCP
// protocol, and plain http:// requests; it resolves names itself and refuses
// link-local and cloud metadata addresses whatever the list says, and
// private ones unless allowed. Every request it answers is recorded as an
// [Event]. It imports nothing but the standard library.
//
//	px, err := egress.Start(egress.Allowlist{Hosts: []string{"pypi.org", "*.pythonhosted.org"}})
//	if err != nil { ... }
//	defer px.Close()
//	// mount px.Dir() into the sandbox; point HTTP(S)_PROXY at a relay to
//	// the socket px.Socket()
//	events, dropped := px.Events()
//
// [PublicClient] applies the same address checks to a host-side client for
// URLs that untrusted input names.
//
// Package agent uses it for its sandboxes' egress; its launcher relays
// 127.0.0.1 inside the sandbox to the socket.
package egress
