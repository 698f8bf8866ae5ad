//go:build kube

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
)

// kubeArgs are the flags that send a run to the test cluster, in a
// namespace that exists.
func kubeArgs(t *testing.T) []string {
	t.Helper()
	cfg := kubetest.Kubeconfig(t)
	kubetest.EnsureNamespace(t, kubetest.Clientset(t), kubetest.Namespace)
	return []string{"--kubeconfig", cfg, "--kube_namespace", kubetest.Namespace}
}

// runPods counts the pods of a run still in the test namespace: those whose
// annotation holds the run id exactly (the label holds a hash of an id that
// is no valid label value).
func runPods(t *testing.T, runID string) int {
	t.Helper()
	pods, err := kubetest.Clientset(t).CoreV1().Pods(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: swebench.LabelRun})
	require.NoError(t, err)
	n := 0
	for _, p := range pods.Items {
		if p.Annotations[swebench.LabelRun] == runID {
			n++
		}
	}
	return n
}

// countPods counts the pods in the test namespace that match selector.
func countPods(t *testing.T, selector string) int {
	t.Helper()
	pods, err := kubetest.Clientset(t).CoreV1().Pods(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	return len(pods.Items)
}

// The demo run as pods (the checkout copied into each) gives the verdicts
// it gives on Docker, and leaves no pod of the run behind.
func TestKubeDemo(t *testing.T) {
	args := kubeArgs(t)
	r := buildDemoRepoT(t)
	cases, err := readDemoCases(demoFS(), r.Repo, r.Commits)
	require.NoError(t, err)
	runID := "kube-" + testenv.Session(t)
	logDir := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), append([]string{"demo", "--log_dir", logDir, "--run_id", runID, "--max_workers", "4"}, args...), nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code, "the demo failed or a verdict differs")
	assert.Contains(t, out.String(), "demo: all 7 verdicts are the expected ones.")
	assert.Contains(t, out.String(), "outcomes: 2 resolved, 2 unresolved, 1 patch_failed, 1 timed_out, 1 empty_patch\n")

	rep := readRunReport(t, filepath.Join(logDir, demoModel+"."+runID+".json"))
	want := map[swebench.Status][]string{}
	for _, c := range cases {
		want[c.Expected] = append(want[c.Expected], c.Instance.InstanceID)
	}
	assert.Equal(t, len(cases), rep.TotalInstances)
	assert.Equal(t, want[swebench.StatusResolved], rep.ResolvedIDs)
	assert.Equal(t, want[swebench.StatusUnresolved], rep.UnresolvedIDs)
	assert.Equal(t, want[swebench.StatusError], rep.ErrorIDs)
	assert.Equal(t, want[swebench.StatusEmptyPatch], rep.EmptyPatchIDs)

	b, err := os.ReadFile(filepath.Join(logDir, "run_evaluation", runID, demoModel, "swebox__demo-1", "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "Copied the checkout into the container", "workspace mode copies the checkout into the pod")
	assert.Zero(t, runPods(t, runID), "the run left pods behind")
}

// A namespace that does not exist stops the demo before any instance runs,
// naming the namespace and the command that creates it; nothing is written
// for the run and no pod is made.
func TestKubeMissingNamespace(t *testing.T) {
	cfg := kubetest.Kubeconfig(t)
	ns := fmt.Sprintf("swebox-absent-%d", time.Now().UnixNano()%1e9)
	logDir := t.TempDir()
	var out bytes.Buffer
	code := run(context.Background(), []string{"demo", "--log_dir", logDir, "--run_id", "kube-nons-" + testenv.Session(t),
		"--kubeconfig", cfg, "--kube_namespace", ns}, nil, &out, &out)
	t.Log(out.String())
	require.Equal(t, exitFailure, code)
	assert.Contains(t, out.String(), fmt.Sprintf("namespace %q does not exist", ns))
	assert.Contains(t, out.String(), "kubectl --kubeconfig "+cfg+" create namespace "+ns+"\n")
	assert.NotContains(t, out.String(), "outcomes:", "no instance ran")
	_, err := os.Stat(filepath.Join(logDir, "run_evaluation"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing of the run was written")
}

// An image the nodes cannot get is an infrastructure failure, never a
// verdict on the prediction: whether the first pod of the run (the network
// isolation probe) or an instance's own pod meets it. The nodes try to pull
// it (imagePullPolicy IfNotPresent) and no registry has it, so it is
// image_pull_failed, with the node's account of the registry's answer.
func TestKubePullFailed(t *testing.T) {
	args := kubeArgs(t)
	ds, preds, repos := exportDemoT(t)
	img := os.Getenv("SWEBOX_TEST_IMAGE")
	if img == "" {
		img = swebench.DefaultImage
	}
	const missing = "swebox/no-such-image:0"
	imageMap := filepath.Join(t.TempDir(), "images.json")
	require.NoError(t, os.WriteFile(imageMap, []byte(`{"swebox/demo:0.1": "`+img+`", "swebox/demo:0.2": "`+missing+`"}`), 0o644))
	cases := []struct {
		name  string
		flags []string
		want  map[string]string
	}{
		{name: "first pod", flags: []string{"-i", "swebox__demo-1", "--image", missing},
			want: map[string]string{"swebox__demo-1": string(swebench.OutcomeImagePullFailed)}},
		// One worker: swebox__demo-1's pod proves the isolation, then
		// swebox__demo-7's own pod cannot start.
		{name: "instance pod", flags: []string{"-i", "swebox__demo-1", "swebox__demo-7", "--image_map", imageMap, "--max_workers", "1"},
			want: map[string]string{"swebox__demo-1": string(swebench.OutcomeResolved), "swebox__demo-7": string(swebench.OutcomeImagePullFailed)}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runID := fmt.Sprintf("kube-noimg%d-%s", i, testenv.Session(t))
			logDir := t.TempDir()
			var out bytes.Buffer
			code := run(context.Background(), append(append([]string{"-d", ds, "-p", preds, "--repos", repos, "--run_id", runID,
				"--log_dir", logDir, "--report_dir", logDir}, tc.flags...), args...), nil, &out, &out)
			t.Log(out.String())
			require.Equal(t, exitOK, code)
			rep := readRunReport(t, filepath.Join(logDir, demoModel+"."+runID+".json"))
			assert.Equal(t, tc.want, rep.Outcomes)
			for id, o := range tc.want {
				if o != string(swebench.OutcomeImagePullFailed) {
					continue
				}
				b, err := os.ReadFile(filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "run_instance.log"))
				require.NoError(t, err)
				assert.Contains(t, string(b), "pulling it failed", "%s: the log says the pull failed", id)
				assert.Contains(t, string(b), "ErrImagePull", "%s: the log carries the node's answer", id)
			}
			assert.Empty(t, rep.UnresolvedIDs, "a missing image is never the model's failure")
			assert.Zero(t, runPods(t, runID))
			assert.NotContains(t, out.String(), "could not reach", "a missing image is not reported as a network failure")
		})
	}
}

// eval prune --run_id removes the pods of that run and of no other, also
// where Kubernetes' label values cannot hold the run ids as they are: ids
// that differ only past the 63rd character, and ids that differ only in a
// character a label value may not have.
func TestKubePrune(t *testing.T) {
	args := kubeArgs(t)
	c := kubetest.Client(t)
	img := os.Getenv("SWEBOX_TEST_IMAGE")
	if img == "" {
		img = swebench.DefaultImage
	}
	long := "kube-prune-" + testenv.Session(t) + strings.Repeat("-x", 30)
	runs := []string{long + "__attempt-1", long + "__attempt-2", "exp:1-" + testenv.Session(t), "exp_1-" + testenv.Session(t)}
	for _, r := range runs {
		for range 2 {
			_, err := c.Create(context.Background(), sandbox.Spec{Image: img, Labels: map[string]string{swebench.LabelRun: r}, Relax: sandbox.Relax{Network: "pod"}})
			require.NoError(t, err)
		}
		require.Equal(t, 2, runPods(t, r))
	}
	for i, r := range runs {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"prune", "--run_id", r}, args...), nil, &out, &out)
		require.Equal(t, exitOK, code, out.String())
		assert.Contains(t, out.String(), "removed 2 pods", r)
		assert.Zero(t, runPods(t, r), r)
		for _, other := range runs[i+1:] {
			assert.Equal(t, 2, runPods(t, other), "pruning %s removed pods of %s", r, other)
		}
	}
}

// SIGINT to the eval process in the middle of a run on the cluster: it
// exits with 130 and deletes every pod of the run, the hanging instance's
// included. The signal waits, after the first verdict, until the hanging
// instance (swebox__demo-6, 20 s timeout) has its pod: only then is a pod
// certainly in flight when the signal comes.
func TestKubeInterrupt(t *testing.T) {
	args := kubeArgs(t)
	bin := swebenchtest.BuildEvalKube(t)
	runID := "kube-int-" + testenv.Session(t)
	hanging := swebench.LabelRun + "=" + runID + "," + swebench.LabelInstance + "=swebox__demo-6"
	inFlight := -1
	log, err := interruptAfterVerdict(t, exec.Command(bin, append([]string{"demo", "--log_dir", t.TempDir(), "--run_id", runID, "--max_workers", "4"}, args...)...),
		func() {
			require.Eventually(t, func() bool { return countPods(t, hanging) > 0 }, 2*time.Minute, 100*time.Millisecond,
				"the hanging instance never got its pod")
			inFlight = runPods(t, runID)
		})
	t.Log(log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitInterrupted, ee.ExitCode())
	assert.Positive(t, inFlight, "pods of the run were running when the signal came")
	assert.Zero(t, runPods(t, runID), "the interrupted run left pods behind")
	assert.Contains(t, log, "deleting the run's pods", "the message names what is removed on the cluster")
}
