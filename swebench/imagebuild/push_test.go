package imagebuild_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// Built (here: present) instance images are pushed under their published
// names to a real registry, which then serves them.
func TestBuildPushesToARegistry(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	reg := testenv.Registry(t)

	tag := "push" + strings.ToLower(strings.NewReplacer(".", "", "_", "", "-", "").Replace(c.Session()[len(c.Session())-10:]))
	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos()), imagebuild.WithTags(tag, tag))
	if err != nil {
		t.Fatal(err)
	}
	// Rust: a base image with docker specs, so its name is this
	// package's alone and never a user's.
	s, err := p.For(ctx, row("tokio-rs/tokio", "4384", "tokio-rs__tokio-4384"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HasImage(ctx, s.Base.Name); err != nil || ok {
		t.Skipf("%s exists on this engine (%v); not touching it", s.Base.Name, err)
	}
	// The three tiers as one small image, so that Build finds them all.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	df := "FROM " + testenv.Image() + "\nLABEL swebox.test=push\n"
	_ = tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))})
	_, _ = tw.Write([]byte(df))
	_ = tw.Close()
	if _, err := c.BuildImage(ctx, sandbox.BuildRequest{Context: &buf, Tags: []string{s.Base.Name, s.Env.Name, s.Instance.Name}, NetworkMode: "none"}); err != nil {
		t.Fatal(err)
	}
	ns := reg + "/swebench"
	ref := harness.InstanceImage(s.InstanceID, ns, tag)
	t.Cleanup(func() {
		for _, img := range []string{ref, s.Instance.Name, s.Env.Name, s.Base.Name} {
			if err := c.RemoveImage(context.Background(), img); err != nil {
				t.Error(err)
			}
		}
	})

	var events []imagebuild.Event
	res, err := imagebuild.Build(ctx, c, imagebuild.BuildRequest{Specs: []imagebuild.Spec{s}, Dir: t.TempDir(), Push: ns,
		Progress: func(e imagebuild.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Instances[s.InstanceID].Err; err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Kind != imagebuild.KindPush || last.Outcome != imagebuild.Pushed || last.Image != ref {
		t.Fatalf("last event %+v, want the push of %s", last, ref)
	}

	// The registry lists the tag under the published name.
	repoName := strings.TrimPrefix(ref[:strings.LastIndex(ref, ":")], reg+"/")
	resp, err := http.Get("http://" + reg + "/v2/" + repoName + "/tags/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tags struct{ Tags []string }
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil || len(tags.Tags) != 1 || tags.Tags[0] != tag {
		t.Fatalf("registry tags of %s: %+v, %v (status %d)", repoName, tags, err, resp.StatusCode)
	}
	// And an engine pulls it back.
	if err := c.RemoveImage(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureImage(ctx, sandbox.EnsureImageRequest{Image: ref}); err != nil {
		t.Fatalf("pull %s back: %v", ref, err)
	}

	// A registry that is gone fails the instance with a PushError.
	res, err = imagebuild.Build(ctx, c, imagebuild.BuildRequest{Specs: []imagebuild.Spec{s}, Dir: t.TempDir(), Push: "127.0.0.1:1/swebench"})
	if err != nil {
		t.Fatal(err)
	}
	var pe *imagebuild.PushError
	if err := res.Instances[s.InstanceID].Err; !errors.As(err, &pe) || !errors.Is(err, imagebuild.ErrPushFailed) {
		t.Fatalf("push to a closed port: %v, want a PushError", err)
	}
	_ = c.RemoveImage(ctx, harness.InstanceImage(s.InstanceID, "127.0.0.1:1/swebench", tag))
}
