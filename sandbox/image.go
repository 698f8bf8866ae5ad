package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	cerrdefs "github.com/containerd/errdefs"
	"io"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
)

// EnsureImageRequest says how to get an image that is not local.
type EnsureImageRequest struct {
	Image string
	// NoPull fails instead of pulling a missing image.
	NoPull bool
}

// EnsureImage makes sure the image is on the engine: the local one is used,
// else it is pulled, else an *ImageError names it.
func (c *Client) EnsureImage(ctx context.Context, req EnsureImageRequest) error {
	if req.Image == "" {
		return &SpecError{Field: "Image", Reason: "required"}
	}
	_, err := c.api.ImageInspect(ctx, req.Image)
	if err == nil {
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return c.engineErr("inspect image", err)
	}
	if req.NoPull {
		return &ImageError{Image: req.Image}
	}
	c.log.Info("pulling image", "image", req.Image)
	rc, err := c.api.ImagePull(ctx, req.Image, image.PullOptions{})
	if err != nil {
		if ee := c.engineErr("pull image", err); errors.Is(ee, ErrEngineUnreachable) {
			return ee
		}
		return &ImageError{Image: req.Image, PullErr: err}
	}
	defer rc.Close()
	if err := readJSONMessages(rc, nil); err != nil {
		return &ImageError{Image: req.Image, PullErr: err}
	}
	return nil
}

// HasImage reports whether the image is on the engine.
func (c *Client) HasImage(ctx context.Context, ref string) (bool, error) {
	_, err := c.api.ImageInspect(ctx, ref)
	if err == nil {
		return true, nil
	}
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	return false, c.engineErr("inspect image", err)
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
	// Log receives the build output. Optional.
	Log io.Writer
}

// BuildImage builds an image and returns its id. The image carries the
// package's labels.
func (c *Client) BuildImage(ctx context.Context, req BuildRequest) (string, error) {
	if req.Context == nil {
		return "", &SpecError{Field: "Context", Reason: "required"}
	}
	resp, err := c.api.ImageBuild(ctx, req.Context, build.ImageBuildOptions{
		Tags: req.Tags, Dockerfile: req.Dockerfile, BuildArgs: req.BuildArgs,
		Labels: c.labels(req.Labels), Remove: true, ForceRemove: true, NetworkMode: req.NetworkMode,
	})
	if err != nil {
		return "", c.engineErr("build image", err)
	}
	defer resp.Body.Close()
	var id string
	err = readJSONMessages(resp.Body, func(m jsonMessage) {
		if m.Aux != nil {
			var aux struct{ ID string }
			if json.Unmarshal(*m.Aux, &aux) == nil && aux.ID != "" {
				id = aux.ID
			}
		}
		if req.Log != nil && m.Stream != "" {
			_, _ = io.WriteString(req.Log, m.Stream)
		}
	})
	if err != nil {
		return "", fmt.Errorf("build image: %w", err)
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
	changes := append([]string{}, req.Changes...)
	for k, v := range c.labels(nil) {
		changes = append(changes, fmt.Sprintf("LABEL %s=%s", k, v))
	}
	rc, err := c.api.ImageImport(ctx, image.ImportSource{Source: req.Source, SourceName: "-"}, req.Ref, image.ImportOptions{Changes: changes})
	if err != nil {
		return c.engineErr("import image", err)
	}
	defer rc.Close()
	if err := readJSONMessages(rc, nil); err != nil {
		return fmt.Errorf("import image: %w", err)
	}
	return nil
}

// RemoveImage removes an image; a missing image is not an error.
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	_, err := c.api.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return c.engineErr("remove image", err)
	}
	return nil
}

type jsonMessage struct {
	Stream      string           `json:"stream"`
	Status      string           `json:"status"`
	Aux         *json.RawMessage `json:"aux"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	Error string `json:"error"`
}

// readJSONMessages drains an engine progress stream and returns the error it
// reports, if any.
func readJSONMessages(r io.Reader, each func(jsonMessage)) error {
	dec := json.NewDecoder(r)
	for {
		var m jsonMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read progress: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(strings.TrimSpace(m.ErrorDetail.Message))
		}
		if m.Error != "" {
			return errors.New(strings.TrimSpace(m.Error))
		}
		if each != nil {
			each(m)
		}
	}
}
