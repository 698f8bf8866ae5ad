//go:build !kube

package main

// The default build's twin of kube.go: the --kube* flags are parsed (the
// same --help), and --kubeconfig is refused at start (validateKube), so
// that building the server compiles no client-go.

import "github.com/swebox/swebox/sandbox"

// kubeBuilt reports whether this build has the Kubernetes backend.
const kubeBuilt = false

// kubeBackend fails: this build has no Kubernetes backend.
func kubeBackend(config) (sandbox.Option, error) {
	return nil, errNoKube
}
