// Package secrets names the values a sandbox may use without seeing them in
// its configuration: a [Resolver] turns a logical name (e.g.
// "github/bot-token") into a value when a sandbox or command needs it, never
// earlier. Package agent copies resolved values onto a sandbox's tmpfs and
// masks them in every result. It imports nothing but the standard library.
//
//	m, err := agent.New(c, agent.WithSecretResolver(secrets.Static{"gh": token}))
package secrets

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotFound: the resolver knows no secret of that name.
var ErrNotFound = errors.New("secret not found")

// Resolver turns a logical secret name into its value. Implementations
// must be safe for concurrent use.
type Resolver interface {
	Resolve(ctx context.Context, name string) (string, error)
}

// Func adapts a function to Resolver.
type Func func(ctx context.Context, name string) (string, error)

// Resolve calls f.
func (f Func) Resolve(ctx context.Context, name string) (string, error) { return f(ctx, name) }

// Static is a Resolver over a fixed map, for tests and small programs.
type Static map[string]string

// Resolve returns the value of name, or an error wrapping ErrNotFound.
func (s Static) Resolve(_ context.Context, name string) (string, error) {
	v, ok := s[name]
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	return v, nil
}
