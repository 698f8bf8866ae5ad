package sandbox

import (
	"context"
	"fmt"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// WarmImage has image fetched to where the client's sandboxes run before
// they need it, so that a caller that knows its next images (an evaluation's
// upcoming instances) can overlap their pulls with the sandboxes running
// now. It returns once the image is there. On a Kubernetes backend a node
// pulls it (see package sandbox/kube); on Docker it returns an error
// wrapping ErrNotSupported: EnsureImage pulls there, and the engine is the
// one place sandboxes run. A failed pull is an *ImageError.
func (c *Client) WarmImage(ctx context.Context, image string) error {
	if image == "" {
		return &SpecError{Field: "Image", Reason: "required"}
	}
	if w, ok := c.b.(seam.ImageWarmer); ok {
		return w.WarmImage(ctx, image, c.labels(nil))
	}
	return fmt.Errorf("warm image %s: %w", image, ErrNotSupported)
}
