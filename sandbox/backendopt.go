package sandbox

import (
	"errors"
	"io"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// Backend is an engine a Client runs sandboxes on: the Docker engine (the
// default) or, with WithBackend, another, such as a Kubernetes cluster from
// package sandbox/kube (a Pod per sandbox). Only packages of this module
// can implement it.
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

// seamEnv is what the package lends a Backend.
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
