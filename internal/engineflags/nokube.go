//go:build !kube

package engineflags

// The default build's twin of kube.go: the flags are parsed (the same
// help), and --kubeconfig is refused (Engine.CheckBuilt), so that building
// a command compiles no client-go.

import "github.com/swebox/swebox/sandbox"

// KubeBuilt reports whether this build has the Kubernetes backend.
const KubeBuilt = false

// kubeBackend fails: this build has no Kubernetes backend.
func kubeBackend(Engine) (sandbox.Option, error) {
	return nil, ErrNotBuilt
}
