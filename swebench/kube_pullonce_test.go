package swebench_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	kubebackend "github.com/swebox/swebox/sandbox/kube"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
)

// buildPadded builds, with Docker, the test image plus a layer of pad
// random bytes drawn from seed, tagged ref, removed when the test ends. The
// nodes hold the test image already, so what a node pulls is that layer.
func buildPadded(t testing.TB, c *sandbox.Client, ref string, seed uint64, pad int) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	df := "FROM " + testenv.Image() + "\nCOPY pad /swebox-pad\n"
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(df))
	require.NoError(t, err)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "pad", Mode: 0o644, Size: int64(pad), Typeflag: tar.TypeReg}))
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	chunk := make([]byte, 1<<20)
	for n := 0; n < pad; n += len(chunk) {
		_, _ = r.Read(chunk)
		_, err := tw.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	_, err = c.BuildImage(context.Background(), sandbox.BuildRequest{Context: &buf, Tags: []string{ref}, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.RemoveImage(context.Background(), ref)) })
}

// pullingEvents counts, per image of refs and node, the kubelet's
// "Pulling" events in the test namespace: one per pull a node started.
func pullingEvents(t testing.TB, refs []string) map[string]map[string]int {
	t.Helper()
	evs, err := kubetest.Clientset(t).CoreV1().Events(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{FieldSelector: "reason=Pulling"})
	require.NoError(t, err)
	out := map[string]map[string]int{}
	for _, ref := range refs {
		out[ref] = map[string]int{}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, `"`+ref+`"`) {
				out[ref][ev.Source.Host] += int(max(ev.Count, 1))
			}
		}
	}
	return out
}

// pullRig evaluates instances whose images only the cluster's registry
// holds, on the two-node test cluster.
type pullRig struct {
	reg     kubetest.TestRegistry
	script  func(args ...string)
	nodes   []string
	f       *fixture
	session string // a short, registry-safe form of the test's session
}

func newPullRig(t testing.TB) *pullRig {
	t.Helper()
	r := &pullRig{reg: kubetest.ClusterRegistry(t), script: k8sLocal(t), nodes: kubetest.ReadyNodes(t)}
	if len(r.nodes) < 2 {
		cienv.Skip(t, "the pull test needs two Ready nodes (scripts/k8s-local.sh up --nodes 2), the cluster has %v", r.nodes)
	}
	r.f = newFixture(t)
	session := strings.ToLower(strings.NewReplacer(".", "", "_", "", "-", "").Replace(r.f.client.Session()))
	r.session = session[max(0, len(session)-10):]
	return r
}

// images builds n images named after set, each with a layer of pad bytes
// of its own, pushes them to the registry and has the nodes drop them when
// the test ends.
func (r *pullRig) images(t testing.TB, set string, seed uint64, pad, n int) []string {
	t.Helper()
	var refs []string
	for k := range n {
		ref := fmt.Sprintf("%s/swebox-pull-%s/%s%d:1", r.reg.Host, r.session, set, k)
		buildPadded(t, r.f.client, ref, seed+uint64(k), pad)
		refs = append(refs, ref)
	}
	r.reg.Push(t, refs...)
	// The nodes keep what they pulled; the test removes it.
	t.Cleanup(func() { r.script(append([]string{"unimport"}, refs...)...) })
	return refs
}

// pullRun is the shape of one evaluation over registry-only images: its
// instances use the images in order (each the index of its image in the
// refs given to evaluate), workers at a time.
type pullRun struct {
	order   []int
	workers int
}

// pullTest's run: 8 instances over 4 images, each image used twice, the
// second use after the first, 2 workers.
var pullTest = pullRun{order: []int{0, 1, 2, 3, 0, 1, 2, 3}, workers: 2}

// evaluate runs run over refs with a pre-pull window (-1: none), checks
// that every instance resolves and no pod is left, and returns the wall
// time and the registry's manifest GETs per repository.
func (r *pullRig) evaluate(t testing.TB, name string, run pullRun, refs []string, window int, opts ...kubebackend.Option) (time.Duration, map[string]int) {
	t.Helper()
	kube := kubetest.ClientOf(t, kubetest.Backend(t, append(opts, kubebackend.WithUnprovenNetworkPolicy())...))
	var ds []dataset.Instance
	var preds []dataset.Prediction
	imageMap := map[string]string{}
	for i, img := range run.order {
		id := fmt.Sprintf("calc__calc-%d", i+1)
		in := r.f.project.Instance(id)
		in.Version = fmt.Sprintf("v%d", img)
		imageMap[r.f.project.Repo+":"+in.Version] = refs[img]
		ds = append(ds, in)
		preds = append(preds, pred(id, goldPatch))
	}
	cfg := r.f.project.Config(t, kube, name+"-"+testenv.Session(t), ds, preds)
	cfg.Image, cfg.ImageMap = "", imageMap
	cfg.MaxWorkers, cfg.PrepullWindow, cfg.Timeout = run.workers, window, 3*time.Minute
	cfg.Limits = sandbox.Limits{} // pods take the nodes' pids limit, not SmallLimits'
	off := r.reg.LogOffset(t)
	t0 := time.Now()
	res, err := swebench.Evaluate(context.Background(), cfg)
	wall := time.Since(t0)
	require.NoError(t, err)
	for _, in := range res.Instances {
		assert.Equal(t, swebench.OutcomeResolved, in.Outcome, "%s: %s", in.InstanceID, in.Error)
	}
	assert.Zero(t, kubePods(t, swebench.LabelRun+"="+cfg.RunID), "the run left pods behind")
	return wall, r.reg.ManifestGets(t, off)
}

// repo is ref's repository in the registry, as its log names it.
func (r *pullRig) repo(ref string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(ref, r.reg.Host+"/"), ":")
	return name
}

// An evaluation on the two-node cluster whose images are in the cluster's
// registry only: 8 instances over 4 images (each used twice, the second
// use after the first), 2 workers, with image placement and pre-pulling
// (the defaults). Each node pulls an image at most once — counted twice, by
// the registry's access log (manifest GETs) and by the kubelets' Pulling
// events, which agree — and every instance resolves. The images carry a
// small layer of their own: the test counts pulls; the wall-time comparison
// with the scheduler alone is BenchmarkKubePlacement.
func TestKubePullsEachImageOncePerNode(t *testing.T) {
	r := newPullRig(t)
	refs := r.images(t, "placed", 1, 4<<20, 4)
	_, gets := r.evaluate(t, "pull-placed", pullTest, refs, 0)
	events := pullingEvents(t, refs)
	for _, ref := range refs {
		pulls := 0
		for node, n := range events[ref] {
			assert.LessOrEqual(t, n, 1, "node %s pulled %s %d times", node, ref, n)
			pulls += n
		}
		assert.GreaterOrEqual(t, pulls, 1, "%s is in the registry only: some node pulled it", ref)
		assert.LessOrEqual(t, gets[r.repo(ref)], len(r.nodes), "the registry served %s more often than there are nodes", ref)
		assert.Equal(t, pulls, gets[r.repo(ref)], "the kubelets' Pulling events and the registry's log count the same pulls of %s", ref)
	}
	t.Logf("per image and node %v; registry manifest GETs %v", events, gets)
}

// BenchmarkKubePlacement compares, in one run, the wall time of the pull
// test's evaluation (8 instances over 4 registry-only images of a 32 MiB
// layer each, 2 workers, two nodes) with image placement and a pre-pull
// window of 2 (the defaults) against the scheduler alone (no placement, no
// pre-pull), each iteration over fresh images. It reports each way's
// seconds and pulls (registry manifest GETs) per iteration:
//
//	eval "$(scripts/k8s-local.sh env)"; go test ./swebench -run '^$' -bench KubePlacement -benchtime 2x
func BenchmarkKubePlacement(b *testing.B) {
	newPullRig(b).comparePlacement(b, pullTest, 32<<20, "")
}

// BenchmarkKubePlacementSharedRegistry is BenchmarkKubePlacement where the
// registry's bandwidth is what the nodes share, as on a real cluster whose
// nodes pull multi-GB images from one registry: they pull through a proxy
// that serves 16 MiB/s in all (throttledRegistry). 8 instances over 2
// images of a 64 MiB layer each, in pairs (A A B B A A B B), 4 workers: the
// scheduler alone sends the two first pods of an image to both nodes, which
// both pull it at once; placement has one node pull it and the other pod
// wait for that pull.
func BenchmarkKubePlacementSharedRegistry(b *testing.B) {
	r := newPullRig(b)
	proxy := throttledRegistry(b, r.reg.Host, 16<<20)
	r.comparePlacement(b, pullRun{order: []int{0, 0, 1, 1, 0, 0, 1, 1}, workers: 4}, 64<<20, proxy)
}

// comparePlacement runs run with placement and pre-pull (the defaults) and
// with the scheduler alone, in turns, each iteration over fresh images of a
// pad-byte layer each, pulled through proxy when it is set, and reports
// each way's seconds and pulls per iteration.
func (r *pullRig) comparePlacement(b *testing.B, run pullRun, pad int, proxy string) {
	n := slices.Max(run.order) + 1
	var placed, plain time.Duration
	var placedPulls, plainPulls int
	count := func(refs []string, gets map[string]int) (n int) {
		for _, ref := range refs {
			n += gets[r.repo(ref)]
		}
		return n
	}
	iters := 0
	for i := 0; b.Loop(); i++ {
		iters++
		b.StopTimer()
		// Fresh bytes each time: a node keeps the layers of an image it
		// dropped until its containerd collects them, and a layer a node
		// holds is not pulled again.
		set := rand.Uint64()
		placedRefs := r.images(b, fmt.Sprintf("p%d-", i), set, pad, n)
		plainRefs := r.images(b, fmt.Sprintf("s%d-", i), set+100, pad, n)
		b.StartTimer()
		// The two ways take turns, so the machine's load falls on each alike.
		w, gets := r.evaluate(b, fmt.Sprintf("placed%d", i), run, r.via(b, proxy, placedRefs), 0)
		placed, placedPulls = placed+w, placedPulls+count(placedRefs, gets)
		w, gets = r.evaluate(b, fmt.Sprintf("plain%d", i), run, r.via(b, proxy, plainRefs), -1, kubebackend.WithImageAffinity(false))
		plain, plainPulls = plain+w, plainPulls+count(plainRefs, gets)
	}
	its := float64(iters)
	b.ReportMetric(placed.Seconds()/its, "placed-s/op")
	b.ReportMetric(plain.Seconds()/its, "scheduler-s/op")
	b.ReportMetric(float64(placedPulls)/its, "placed-pulls/op")
	b.ReportMetric(float64(plainPulls)/its, "scheduler-pulls/op")
	b.ReportMetric(0, "ns/op")
}

// via names the registry's refs as the nodes pull them: through proxy (a
// host:port) when it is set, and then has the nodes drop them under that
// name when the test ends.
func (r *pullRig) via(t testing.TB, proxy string, refs []string) []string {
	if proxy == "" {
		return refs
	}
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = proxy + "/" + strings.TrimPrefix(ref, r.reg.Host+"/")
	}
	t.Cleanup(func() { r.script(append([]string{"unimport"}, out...)...) })
	return out
}

// throttledRegistry serves the registry at host through a proxy on this
// machine's loopback whose responses share bytesPerSec, as the nodes of a
// cluster share their registry's bandwidth, and returns the proxy's
// host:port. The nodes' containerd speaks plain HTTP to it, as to the
// registry, being on a loopback address.
func throttledRegistry(t testing.TB, host string, bytesPerSec int) string {
	lim := rate.NewLimiter(rate.Limit(bytesPerSec), 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out, err := http.NewRequestWithContext(req.Context(), req.Method, "http://"+host+req.URL.RequestURI(), req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if lim.WaitN(req.Context(), n) != nil {
					return
				}
				if _, err := w.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// An image the cluster's registry does not have ends its instance as
// image_pull_failed with the registry's answer, never as a verdict; the
// registry was asked (its log shows the node's request).
func TestKubeImageMissingFromRegistryIsPullFailed(t *testing.T) {
	reg := kubetest.ClusterRegistry(t)
	kube := kubetest.Client(t)
	f := newFixture(t)
	session := strings.ToLower(strings.NewReplacer(".", "", "_", "", "-", "").Replace(f.client.Session()))
	repo := "swebox-pull-" + session[max(0, len(session)-10):] + "/absent"
	cfg := f.config(t, "absent-"+testenv.Session(t), []dataset.Prediction{pred("calc__calc-1", goldPatch)})
	cfg.Sandboxes, cfg.InstanceIDs = []*sandbox.Client{kube}, []string{"calc__calc-1"}
	cfg.Image = reg.Host + "/" + repo + ":1"
	off := reg.LogOffset(t)
	res, err := swebench.Evaluate(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	r := res.Instances[0]
	assert.Equal(t, swebench.OutcomeImagePullFailed, r.Outcome, r.Error)
	assert.ErrorIs(t, r.Err, sandbox.ErrImageNotFound)
	assert.Contains(t, r.Error, cfg.Image)
	assert.Contains(t, r.Error, "not found", "the registry's answer")
	b, err := os.ReadFile(reg.Log)
	require.NoError(t, err)
	assert.Contains(t, string(b[off:]), "/v2/"+repo+"/manifests/1", "a node asked the registry")
	assert.Zero(t, kubePods(t, swebench.LabelRun+"="+cfg.RunID), "the run left pods behind")
}
