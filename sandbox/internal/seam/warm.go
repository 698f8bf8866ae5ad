package seam

import "context"

// ImageWarmer is implemented by backends whose nodes fetch images
// themselves (a Kubernetes cluster's kubelets), so that a caller who knows
// which images it will need soon can have them fetched while other work
// runs.
type ImageWarmer interface {
	// WarmImage returns once a place where the backend's sandboxes run
	// holds image, fetching it there if none does. Whatever it creates to
	// do so carries labels and is removed before it returns.
	WarmImage(ctx context.Context, image string, labels map[string]string) error
}
