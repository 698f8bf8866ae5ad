package kube

import (
	"errors"
	"fmt"
	"github.com/swebox/swebox/sandbox"
	"time"
)

// Option configures a Backend.
type Option func(*options) error

type options struct {
	namespace string
	unproven  bool
	nodeGrace time.Duration

	noImageAffinity bool // WithImageAffinity(false)
}

// WithNamespace sets the namespace the pods run in; it must exist.
// Default: DefaultNamespace.
func WithNamespace(ns string) Option {
	return func(o *options) error {
		if ns == "" {
			return errors.New("WithNamespace: empty namespace")
		}
		o.namespace = ns
		return nil
	}
}

// WithUnprovenNetworkPolicy relaxes network isolation: the default-deny
// NetworkPolicy is still created and sandboxes are still labelled for it,
// but no probe proves that the cluster enforces it. Use it only on clusters
// known to enforce NetworkPolicy. Default: proven.
func WithUnprovenNetworkPolicy() Option {
	return func(o *options) error {
		o.unproven = true
		return nil
	}
}

// WithNodeGrace tells the backend the cluster's node-monitor-grace-period.
// A command whose stream broke while its pod's node still shows Ready waits
// at most this plus 15 s for the node to turn NotReady; a kubelet that still
// does not answer then counts as lost too (reason "KubeletUnreachable").
// Default: DefaultNodeGrace.
func WithNodeGrace(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithNodeGrace: %s is not positive", d)
		}
		o.nodeGrace = d
		return nil
	}
}

var _ sandbox.Backend = (*Backend)(nil)
