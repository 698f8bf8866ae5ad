package sandbox

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Backend is an engine other than the default Docker engine that a Client
// can run sandboxes on. Package sandbox/kube provides one (a Pod per
// sandbox); only packages of this module can implement it.
type Backend interface {
	seam.Backend[Spec]
}

// WithBackend makes the client run sandboxes on b instead of a Docker
// engine, e.g. a Kubernetes cluster from package sandbox/kube:
//
//	b, err := kube.New(kubeconfig)
//	...
//	c, err := sandbox.New(sandbox.WithBackend(b))
//
// The Docker options (WithHost, WithAPIVersion, WithTLS) do not apply to
// such a client and are refused beside it. Default: Docker.
func WithBackend(b Backend) Option {
	return func(c *config) error {
		if b == nil {
			return errors.New("WithBackend: nil backend")
		}
		c.backend = b
		return nil
	}
}

// seamBackend adapts a Backend from a subpackage to the package's own
// backend interface.
type seamBackend struct{ b Backend }

func (a seamBackend) host() string                   { return a.b.Host() }
func (a seamBackend) ping(ctx context.Context) error { return a.b.Ping(ctx) }
func (a seamBackend) runtimes(ctx context.Context) ([]string, error) {
	return a.b.Runtimes(ctx)
}

func (a seamBackend) create(ctx context.Context, req createRequest) (string, error) {
	return a.b.Create(ctx, req)
}

func (a seamBackend) start(ctx context.Context, id string) error { return a.b.Start(ctx, id) }

func (a seamBackend) startAttached(ctx context.Context, id string, s stdio) (*mainProcess, error) {
	return a.b.StartAttached(ctx, id, s)
}

func (a seamBackend) exec(ctx context.Context, id string, call execCall) (execStatus, error) {
	return a.b.Exec(ctx, id, call)
}

func (a seamBackend) inspect(ctx context.Context, id string) (State, error) {
	st, err := a.b.Inspect(ctx, id)
	return State(st), err
}

func (a seamBackend) logs(ctx context.Context, id, tail string, stdout, stderr io.Writer) error {
	return a.b.Logs(ctx, id, tail, stdout, stderr)
}

func (a seamBackend) stop(ctx context.Context, id string, grace time.Duration) error {
	return a.b.Stop(ctx, id, grace)
}

func (a seamBackend) kill(ctx context.Context, id, signal string) error {
	return a.b.Kill(ctx, id, signal)
}

func (a seamBackend) remove(ctx context.Context, id string) error { return a.b.Remove(ctx, id) }

func (a seamBackend) list(ctx context.Context, labels map[string]string) ([]Object, error) {
	objs, err := a.b.List(ctx, labels)
	out := make([]Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, Object{Kind: ObjectKind(o.Kind), ID: o.ID, Name: o.Name, Labels: o.Labels})
	}
	return out, err
}

func (a seamBackend) removeObject(ctx context.Context, o Object) error {
	return a.b.RemoveObject(ctx, seam.Object{Kind: string(o.Kind), ID: o.ID, Name: o.Name, Labels: o.Labels})
}

func (a seamBackend) close() error { return a.b.Close() }

// seamEnv is what the package lends a Backend from a subpackage.
func seamEnv(c *config) seam.Env[Spec] {
	return seam.Env[Spec]{
		Log:      c.log,
		Defaults: func(s Spec) Spec { return s.withDefaults() },
		TarWorkspace: func(dir string, uid, gid int, w io.Writer) error {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(tarHostPath(dir, true, pw)) }()
			defer pr.Close()
			_, err := filterTar(pr, w, pathChecker{keepEscaping: true}, DefaultCopyLimit, uid, gid)
			return err
		},
	}
}
