package kubetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
)

// TestRegistry is the test cluster's image registry (Debian's
// docker-registry, started by `k8s-local.sh up` or `k8s-local.sh registry
// start`), which its nodes pull from as a real cluster's nodes do.
type TestRegistry struct {
	// Host is its host:port, SWEBOX_TEST_REGISTRY.
	Host string
	// Log is its access log, SWEBOX_TEST_REGISTRY_LOG.
	Log string
}

// ClusterRegistry returns the test cluster's registry from the environment that
// `k8s-local.sh env` prints; without it the test skips (fails in CI).
func ClusterRegistry(t testing.TB) TestRegistry {
	t.Helper()
	r := TestRegistry{Host: os.Getenv("SWEBOX_TEST_REGISTRY"), Log: os.Getenv("SWEBOX_TEST_REGISTRY_LOG")}
	if r.Host == "" || r.Log == "" {
		cienv.Skip(t, "SWEBOX_TEST_REGISTRY(_LOG) is not set: start the test cluster's registry (scripts/k8s-local.sh registry start) and eval $(scripts/k8s-local.sh env)")
	}
	resp, err := http.Get("http://" + r.Host + "/v2/")
	require.NoError(t, err, "the test cluster's registry does not answer")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the test cluster's registry at %s", r.Host)
	return r
}

// Push pushes images from Docker to the registry (their names start with
// its host) with the docker CLI; Forget removes them again when the test
// ends.
func (r TestRegistry) Push(t testing.TB, refs ...string) {
	t.Helper()
	for _, ref := range refs {
		require.True(t, strings.HasPrefix(ref, r.Host+"/"), "%s is not an image of %s", ref, r.Host)
		out, err := exec.Command("docker", "push", ref).CombinedOutput()
		require.NoError(t, err, "docker push %s: %s", ref, out)
	}
	t.Cleanup(func() { r.Forget(t, refs...) })
}

// Forget deletes the images' manifests from the registry; one already gone
// is fine.
func (r TestRegistry) Forget(t testing.TB, refs ...string) {
	t.Helper()
	for _, ref := range refs {
		repo, tag, ok := strings.Cut(strings.TrimPrefix(ref, r.Host+"/"), ":")
		if !ok {
			tag = "latest"
		}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodHead, "http://"+r.Host+"/v2/"+repo+"/manifests/"+tag, nil)
		req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("registry: look up %s: %v", ref, err)
			continue
		}
		resp.Body.Close()
		digest := resp.Header.Get("Docker-Content-Digest")
		if resp.StatusCode == http.StatusNotFound || digest == "" {
			continue
		}
		del, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, "http://"+r.Host+"/v2/"+repo+"/manifests/"+digest, nil)
		resp, err = http.DefaultClient.Do(del)
		if err != nil {
			t.Errorf("registry: delete %s: %v", ref, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNotFound {
			t.Errorf("registry: delete %s: %s", ref, resp.Status)
		}
	}
}

// LogOffset is the access log's size now: ManifestGets counts from there.
func (r TestRegistry) LogOffset(t testing.TB) int64 {
	t.Helper()
	st, err := os.Stat(r.Log)
	require.NoError(t, err)
	return st.Size()
}

// accessLine is a request line of the registry's access log (combined
// format): method, repository, reference and status of a manifest request.
var accessLine = regexp.MustCompile(`"(GET|HEAD) /v2/(.+)/manifests/([^ ?"]+)[^"]*" (\d{3}) `)

// ManifestGets counts, per repository (the name after host/), the manifest
// GETs answered 200 since offset: each pull of an image by a node's
// containerd fetches its manifest once (after a HEAD that resolves the
// tag), so this counts the pulls the registry served.
func (r TestRegistry) ManifestGets(t testing.TB, offset int64) map[string]int {
	t.Helper()
	f, err := os.Open(r.Log)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(offset, io.SeekStart)
	require.NoError(t, err)
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := accessLine.FindStringSubmatch(sc.Text())
		if m == nil || m[1] != "GET" || m[4] != "200" {
			continue
		}
		out[m[2]]++
	}
	require.NoError(t, sc.Err(), "read %s", r.Log)
	return out
}

// String names the registry for messages.
func (r TestRegistry) String() string { return fmt.Sprintf("registry %s (log %s)", r.Host, r.Log) }
