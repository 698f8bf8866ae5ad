//go:build kube

package main

// This file, built only with the kube tag, is the server's one link to
// client-go; nokube.go is its twin for the default build (see the package
// documentation for why the backend is behind a tag).

import (
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// kubeBuilt reports whether this build has the Kubernetes backend.
const kubeBuilt = true

// kubeBackend is the option that runs every sandbox of the server's client
// as a pod of the cluster of cfg.Kubeconfig, with the eval command's
// --kube_* flags.
func kubeBackend(cfg config) (sandbox.Option, error) {
	opts := []kube.Option{kube.WithNamespace(cfg.KubeNamespace)}
	if cfg.KubeNodeGrace > 0 {
		opts = append(opts, kube.WithNodeGrace(cfg.KubeNodeGrace))
	}
	if !cfg.KubeImageAffinity {
		opts = append(opts, kube.WithImageAffinity(false))
	}
	b, err := kube.New(cfg.Kubeconfig, opts...)
	if err != nil {
		return nil, err
	}
	return sandbox.WithBackend(b), nil
}
