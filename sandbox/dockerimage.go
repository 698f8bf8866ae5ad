package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
)

func (d *dockerBackend) InspectImage(ctx context.Context, ref string) (ImageInfo, error) {
	info, err := d.api.ImageInspect(ctx, ref)
	if err != nil {
		return ImageInfo{}, dockerErr(err)
	}
	ii := ImageInfo{ID: info.ID, RepoDigests: info.RepoDigests}
	if info.Config != nil {
		ii.Labels, ii.Cmd = info.Config.Labels, info.Config.Cmd
	}
	return ii, nil
}

func (d *dockerBackend) PullImage(ctx context.Context, ref string) error {
	rc, err := d.api.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return pullErr(dockerErr(err))
	}
	defer rc.Close()
	return pullErr(readJSONMessages(rc, nil))
}

// pullErr marks a pull's failure that is a registry's rate limit with
// ErrRateLimited. The Engine API has no status of its own for it, so this is
// the one place that reads the engine's text, and it matches:
//   - a 429 answer of the engine itself (a proxy in front of it), which the
//     client types as resource exhausted;
//   - "toomanyrequests", the registry error code of a 429 (Docker Hub's
//     "toomanyrequests: You have reached your pull rate limit ..."), which
//     the engine passes on in its error answer (status 500) or, once the
//     pull has started, in the progress stream's errorDetail;
//   - "429 Too Many Requests", how the containerd image store words the
//     registry's answer ("unexpected status code ...: 429 Too Many Requests
//   - Server message: toomanyrequests: ...").
func pullErr(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if cerrdefs.IsResourceExhausted(err) || strings.Contains(msg, "toomanyrequests") || strings.Contains(msg, "429 too many requests") {
		return &rateLimitError{err: err}
	}
	return err
}

// rateLimitError is a pull refused for a registry's rate limit.
type rateLimitError struct{ err error }

func (e *rateLimitError) Error() string   { return e.err.Error() }
func (e *rateLimitError) Unwrap() []error { return []error{ErrRateLimited, e.err} }

func (d *dockerBackend) BuildImage(ctx context.Context, req BuildRequest, labels map[string]string) (string, error) {
	resp, err := d.api.ImageBuild(ctx, req.Context, build.ImageBuildOptions{
		Tags: req.Tags, Dockerfile: req.Dockerfile, BuildArgs: req.BuildArgs,
		Labels: labels, Remove: true, ForceRemove: true, NetworkMode: req.NetworkMode,
		Platform: req.Platform, NoCache: req.NoCache,
	})
	if err != nil {
		return "", dockerErr(err)
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
	return id, err
}

func (d *dockerBackend) ImportImage(ctx context.Context, req ImportRequest, labels map[string]string) error {
	changes := append([]string{}, req.Changes...)
	for k, v := range labels {
		changes = append(changes, fmt.Sprintf("LABEL %s=%s", k, v))
	}
	rc, err := d.api.ImageImport(ctx, image.ImportSource{Source: req.Source, SourceName: "-"}, req.Ref, image.ImportOptions{Changes: changes})
	if err != nil {
		return dockerErr(err)
	}
	defer rc.Close()
	return readJSONMessages(rc, nil)
}

// noAuth is the X-Registry-Auth header of a registry that needs no
// credentials: an empty JSON object (engines before 23.0 refuse an empty
// header).
const noAuth = "e30="

func (d *dockerBackend) PushImage(ctx context.Context, source, target string, log io.Writer) error {
	if err := d.api.ImageTag(ctx, source, target); err != nil {
		return dockerErr(err)
	}
	rc, err := d.api.ImagePush(ctx, target, image.PushOptions{RegistryAuth: noAuth})
	if err != nil {
		return dockerErr(err)
	}
	defer rc.Close()
	return readJSONMessages(rc, func(m jsonMessage) {
		if log != nil && m.Status != "" {
			_, _ = io.WriteString(log, m.Status+"\n")
		}
	})
}

func (d *dockerBackend) RemoveImage(ctx context.Context, ref string) error {
	_, err := d.api.ImageRemove(ctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	return dockerErr(err)
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
