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

// pullPad is the size of the layer of its own each image of the pull test
// carries on top of the test image, which the nodes hold already: what a
// node pulls is that layer.
const pullPad = 32 << 20

// buildPadded builds, with Docker, the test image plus a layer of pullPad
// random bytes drawn from seed, tagged ref, removed when the test ends.
func buildPadded(t *testing.T, c *sandbox.Client, ref string, seed uint64) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	df := "FROM " + testenv.Image() + "\nCOPY pad /swebox-pad\n"
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(df))
	require.NoError(t, err)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "pad", Mode: 0o644, Size: pullPad, Typeflag: tar.TypeReg}))
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	chunk := make([]byte, 1<<20)
	for n := 0; n < pullPad; n += len(chunk) {
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
func pullingEvents(t *testing.T, refs []string) map[string]map[string]int {
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

// An evaluation on the two-node cluster whose images are in the cluster's
// registry only: 8 instances over 4 images (each used twice, the second
// use after the first), 2 workers. With image placement and pre-pulling (the
// defaults) each node pulls an image at most once — counted twice, by the
// registry's access log (manifest GETs) and by the kubelets' Pulling
// events, which agree — and every instance resolves. The same evaluation
// with both off (pods go where the scheduler puts them, nothing is
// pre-pulled) runs over 4 other images of the same sizes, for the wall-time
// comparison the test logs (BENCHMARKS.md has the figures).
func TestKubePullsEachImageOncePerNode(t *testing.T) {
	reg := kubetest.ClusterRegistry(t)
	script := k8sLocal(t)
	nodes := kubetest.ReadyNodes(t)
	if len(nodes) < 2 {
		cienv.Skip(t, "the pull test needs two Ready nodes (scripts/k8s-local.sh up --nodes 2), the cluster has %v", nodes)
	}
	f := newFixture(t)
	session := strings.ToLower(strings.NewReplacer(".", "", "_", "", "-", "").Replace(f.client.Session()))
	session = session[max(0, len(session)-10):]
	const images, uses = 4, 2
	build := func(set string, seed uint64) []string {
		var refs []string
		for k := range images {
			ref := fmt.Sprintf("%s/swebox-pull-%s/%s%d:1", reg.Host, session, set, k)
			buildPadded(t, f.client, ref, seed+uint64(k))
			refs = append(refs, ref)
		}
		reg.Push(t, refs...)
		// The nodes keep what they pulled; the test removes it.
		t.Cleanup(func() { script(append([]string{"unimport"}, refs...)...) })
		return refs
	}
	placedRefs, plainRefs := build("placed", 1), build("plain", 100)

	evaluate := func(name string, refs []string, window int, opts ...kubebackend.Option) (time.Duration, map[string]int) {
		t.Helper()
		kube := kubetest.ClientOf(t, kubetest.Backend(t, append(opts, kubebackend.WithUnprovenNetworkPolicy())...))
		var ds []dataset.Instance
		var preds []dataset.Prediction
		imageMap := map[string]string{}
		for i := range images * uses {
			id := fmt.Sprintf("calc__calc-%d", i+1)
			in := f.project.Instance(id)
			in.Version = fmt.Sprintf("v%d", i%images)
			imageMap[f.project.Repo+":"+in.Version] = refs[i%images]
			ds = append(ds, in)
			preds = append(preds, pred(id, goldPatch))
		}
		cfg := f.project.Config(t, kube, name+"-"+testenv.Session(t), ds, preds)
		cfg.Image, cfg.ImageMap = "", imageMap
		cfg.MaxWorkers, cfg.PrepullWindow, cfg.Timeout = 2, window, 3*time.Minute
		cfg.Limits = sandbox.Limits{} // pods take the nodes' pids limit, not SmallLimits'
		off := reg.LogOffset(t)
		t0 := time.Now()
		res, err := swebench.Evaluate(context.Background(), cfg)
		wall := time.Since(t0)
		require.NoError(t, err)
		for _, r := range res.Instances {
			assert.Equal(t, swebench.OutcomeResolved, r.Outcome, "%s: %s", r.InstanceID, r.Error)
		}
		assert.Zero(t, kubePods(t, swebench.LabelRun+"="+cfg.RunID), "the run left pods behind")
		return wall, reg.ManifestGets(t, off)
	}
	repo := func(ref string) string {
		name, _, _ := strings.Cut(strings.TrimPrefix(ref, reg.Host+"/"), ":")
		return name
	}

	placedWall, placedGets := evaluate("pull-placed", placedRefs, 0)
	placedEvents := pullingEvents(t, placedRefs)
	placedPulls := 0
	for _, ref := range placedRefs {
		pulls := 0
		for node, n := range placedEvents[ref] {
			assert.LessOrEqual(t, n, 1, "node %s pulled %s %d times", node, ref, n)
			pulls += n
		}
		assert.GreaterOrEqual(t, pulls, 1, "%s is in the registry only: some node pulled it", ref)
		assert.LessOrEqual(t, placedGets[repo(ref)], len(nodes), "the registry served %s more often than there are nodes", ref)
		assert.Equal(t, pulls, placedGets[repo(ref)], "the kubelets' Pulling events and the registry's log count the same pulls of %s", ref)
		placedPulls += pulls
	}
	t.Logf("placed: per image and node %v; registry manifest GETs %v", placedEvents, placedGets)

	plainWall, plainGets := evaluate("pull-plain", plainRefs, -1, kubebackend.WithImageAffinity(false))
	plainEvents := pullingEvents(t, plainRefs)
	plainPulls := 0
	for _, ref := range plainRefs {
		plainPulls += plainGets[repo(ref)]
	}
	t.Logf("scheduler only: per image and node %v; registry manifest GETs %v", plainEvents, plainGets)
	t.Logf("%d instances over %d images of a %d MiB layer each, 2 workers, %d nodes: placement and pre-pull %s with %d pulls; scheduler only %s with %d pulls",
		images*uses, images, pullPad>>20, len(nodes), placedWall.Round(100*time.Millisecond), placedPulls, plainWall.Round(100*time.Millisecond), plainPulls)
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
