package swebench_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// pullImages and pullUses shape the pull runs: 8 instances over 4 images,
// each image used twice, the second use after the first.
const pullImages, pullUses = 4, 2

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

// images builds pullImages images named after set, each with a layer of
// pad bytes of its own, pushes them to the registry and has the nodes drop
// them when the test ends.
func (r *pullRig) images(t testing.TB, set string, seed uint64, pad int) []string {
	t.Helper()
	var refs []string
	for k := range pullImages {
		ref := fmt.Sprintf("%s/swebox-pull-%s/%s%d:1", r.reg.Host, r.session, set, k)
		buildPadded(t, r.f.client, ref, seed+uint64(k), pad)
		refs = append(refs, ref)
	}
	r.reg.Push(t, refs...)
	// The nodes keep what they pulled; the test removes it.
	t.Cleanup(func() { r.script(append([]string{"unimport"}, refs...)...) })
	return refs
}

// evaluate runs the pullImages*pullUses instances over refs with 2
// workers and a pre-pull window (-1: none), checks that every one resolves
// and no pod is left, and returns the wall time and the registry's manifest
// GETs per repository.
func (r *pullRig) evaluate(t testing.TB, name string, refs []string, window int, opts ...kubebackend.Option) (time.Duration, map[string]int) {
	t.Helper()
	kube := kubetest.ClientOf(t, kubetest.Backend(t, append(opts, kubebackend.WithUnprovenNetworkPolicy())...))
	var ds []dataset.Instance
	var preds []dataset.Prediction
	imageMap := map[string]string{}
	for i := range pullImages * pullUses {
		id := fmt.Sprintf("calc__calc-%d", i+1)
		in := r.f.project.Instance(id)
		in.Version = fmt.Sprintf("v%d", i%pullImages)
		imageMap[r.f.project.Repo+":"+in.Version] = refs[i%pullImages]
		ds = append(ds, in)
		preds = append(preds, pred(id, goldPatch))
	}
	cfg := r.f.project.Config(t, kube, name+"-"+testenv.Session(t), ds, preds)
	cfg.Image, cfg.ImageMap = "", imageMap
	cfg.MaxWorkers, cfg.PrepullWindow, cfg.Timeout = 2, window, 3*time.Minute
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
	refs := r.images(t, "placed", 1, 4<<20)
	_, gets := r.evaluate(t, "pull-placed", refs, 0)
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
	r := newPullRig(b)
	const pad = 32 << 20
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
		set := uint64(1000 * (i + 1))
		placedRefs := r.images(b, fmt.Sprintf("p%d-", i), set, pad)
		plainRefs := r.images(b, fmt.Sprintf("s%d-", i), set+100, pad)
		b.StartTimer()
		// The two ways take turns, so the machine's load falls on each alike.
		w, gets := r.evaluate(b, fmt.Sprintf("placed%d", i), placedRefs, 0)
		placed, placedPulls = placed+w, placedPulls+count(placedRefs, gets)
		w, gets = r.evaluate(b, fmt.Sprintf("plain%d", i), plainRefs, -1, kubebackend.WithImageAffinity(false))
		plain, plainPulls = plain+w, plainPulls+count(plainRefs, gets)
	}
	n := float64(iters)
	b.ReportMetric(placed.Seconds()/n, "placed-s/op")
	b.ReportMetric(plain.Seconds()/n, "scheduler-s/op")
	b.ReportMetric(float64(placedPulls)/n, "placed-pulls/op")
	b.ReportMetric(float64(plainPulls)/n, "scheduler-pulls/op")
	b.ReportMetric(0, "ns/op")
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
