package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// EnsureImageRequest says how to get an image that is not local.
type EnsureImageRequest struct {
	Image string
	// NoPull fails instead of pulling a missing image.
	NoPull bool
}

// images returns the client's backend's image operations, or an error
// wrapping ErrNotSupported naming op.
func (c *Client) images(op string) (imageBackend, error) {
	ib, ok := c.b.(imageBackend)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, ErrNotSupported)
	}
	return ib, nil
}

// EnsureImage makes sure the image is on the engine: the local one is used,
// else it is pulled, else an *ImageError names it.
func (c *Client) EnsureImage(ctx context.Context, req EnsureImageRequest) error {
	if req.Image == "" {
		return &SpecError{Field: "Image", Reason: "required"}
	}
	ib, err := c.images("ensure image")
	if err != nil {
		return err
	}
	_, err = ib.InspectImage(ctx, req.Image)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errNotFound) {
		return c.engineErr("inspect image", err)
	}
	if req.NoPull {
		return &ImageError{Image: req.Image}
	}
	c.log.Info("pulling image", "image", req.Image)
	if err := ib.PullImage(ctx, req.Image); err != nil {
		if errors.Is(err, errUnreachable) {
			return c.engineErr("pull image", err)
		}
		return &ImageError{Image: req.Image, PullErr: err}
	}
	return nil
}

// HasImage reports whether the image is on the engine.
func (c *Client) HasImage(ctx context.Context, ref string) (bool, error) {
	_, err := c.InspectImage(ctx, ref)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrImageNotFound) {
		return false, nil
	}
	return false, err
}

// InspectImage describes a local image; a missing one is an *ImageError.
func (c *Client) InspectImage(ctx context.Context, ref string) (ImageInfo, error) {
	ib, err := c.images("inspect image")
	if err != nil {
		return ImageInfo{}, err
	}
	info, err := ib.InspectImage(ctx, ref)
	if errors.Is(err, errNotFound) {
		return ImageInfo{}, &ImageError{Image: ref}
	}
	if err != nil {
		return ImageInfo{}, c.engineErr("inspect image", err)
	}
	return info, nil
}

// BuildRequest builds an image from a Dockerfile context.
type BuildRequest struct {
	// Context is a tar stream of the build context.
	Context io.Reader
	// Dockerfile is its path inside the context. Default "Dockerfile".
	Dockerfile string
	Tags       []string
	BuildArgs  map[string]*string
	Labels     map[string]string
	// NetworkMode of RUN steps, e.g. "none". Default: the engine's.
	NetworkMode string
	// Platform to build for, e.g. "linux/amd64". Default: the engine's.
	Platform string
	// NoCache builds every step afresh. Default false.
	NoCache bool
	// Log receives the build output. Optional.
	Log io.Writer
}

// BuildImage builds an image and returns its id. The image carries the
// package's labels.
func (c *Client) BuildImage(ctx context.Context, req BuildRequest) (string, error) {
	if req.Context == nil {
		return "", &SpecError{Field: "Context", Reason: "required"}
	}
	ib, err := c.images("build image")
	if err != nil {
		return "", err
	}
	id, err := ib.BuildImage(ctx, req, c.labels(req.Labels))
	if err != nil {
		return "", c.engineErr("build image", err)
	}
	return id, nil
}

// ImportRequest turns a root filesystem tar stream into an image.
type ImportRequest struct {
	Source io.Reader
	Ref    string
	// Changes are Dockerfile instructions applied to the image, e.g.
	// `CMD ["/bin/bash"]`. The package's labels are added.
	Changes []string
}

// ImportImage imports a root filesystem (e.g. from mmdebstrap) as an image,
// the registry-free way to get one.
func (c *Client) ImportImage(ctx context.Context, req ImportRequest) error {
	if req.Source == nil {
		return &SpecError{Field: "Source", Reason: "required"}
	}
	if req.Ref == "" {
		return &SpecError{Field: "Ref", Reason: "required"}
	}
	ib, err := c.images("import image")
	if err != nil {
		return err
	}
	if err := ib.ImportImage(ctx, req, c.labels(nil)); err != nil {
		return c.engineErr("import image", err)
	}
	return nil
}

// RemoveImage removes an image; a missing image is not an error.
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	ib, err := c.images("remove image")
	if err != nil {
		return err
	}
	if err := ib.RemoveImage(ctx, ref); err != nil && !errors.Is(err, errNotFound) {
		return c.engineErr("remove image", err)
	}
	return nil
}

// PushRequest pushes a local image to a registry.
type PushRequest struct {
	// Image is the local image.
	Image string
	// Ref is the name to push it under, registry host included
	// ("127.0.0.1:5000/ns/name:tag"); the image is tagged so first.
	Ref string
	// Log receives the push's status lines. Optional.
	Log io.Writer
}

// imagePusher is implemented by backends that can push (the Docker
// Engine's).
type imagePusher interface {
	PushImage(ctx context.Context, source, target string, log io.Writer) error
}

// PushImage tags the image as req.Ref and pushes it. A registry that needs
// credentials is not supported.
func (c *Client) PushImage(ctx context.Context, req PushRequest) error {
	if req.Image == "" {
		return &SpecError{Field: "Image", Reason: "required"}
	}
	if req.Ref == "" {
		return &SpecError{Field: "Ref", Reason: "required"}
	}
	p, ok := c.b.(imagePusher)
	if !ok {
		return fmt.Errorf("push image: %w", ErrNotSupported)
	}
	if err := p.PushImage(ctx, req.Image, req.Ref, req.Log); err != nil {
		return c.engineErr("push image", err)
	}
	return nil
}
