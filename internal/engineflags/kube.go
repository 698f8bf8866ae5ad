//go:build kube

package engineflags

// This file, built only with the kube tag, is the commands' one link to
// client-go; nokube.go is its twin for the default build.

import (
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// KubeBuilt reports whether this build has the Kubernetes backend.
const KubeBuilt = true

// kubeBackend is the option that runs every sandbox of a client as a pod
// of the cluster of e.Kubeconfig.
func kubeBackend(e Engine) (sandbox.Option, error) {
	opts := []kube.Option{kube.WithNamespace(e.KubeNamespace)}
	if e.KubeNodeGrace > 0 {
		opts = append(opts, kube.WithNodeGrace(e.KubeNodeGrace))
	}
	if !e.KubeImageAffinity {
		opts = append(opts, kube.WithImageAffinity(false))
	}
	b, err := kube.New(e.Kubeconfig, opts...)
	if err != nil {
		return nil, err
	}
	return sandbox.WithBackend(b), nil
}
