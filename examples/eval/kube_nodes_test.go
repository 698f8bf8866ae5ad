//go:build kube

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/grade"
)

// Two-node tests: the test cluster runs swebox-node1 and swebox-node2
// (scripts/k8s-local.sh up --nodes 2).

// twoNodes returns the test cluster's two Ready nodes, or skips (fails in
// CI) when it has fewer.
func twoNodes(t *testing.T) []string {
	t.Helper()
	nodes := kubetest.ReadyNodes(t)
	if len(nodes) < 2 {
		cienv.Skip(t, "the test cluster has %d Ready nodes (%v); these tests need 2 (scripts/k8s-local.sh up --nodes 2)", len(nodes), nodes)
	}
	return nodes
}

// demo16 writes a 16-instance dataset and its predictions: the demo
// instances with a verdict (swebox__demo-1, -2, -3, -7), each four times
// under new ids (swebox__demo-1 as swebox__demo-100 ... swebox__demo-103).
// It returns the files, the repository sources and each id's expected
// status.
func demo16(t *testing.T) (ds, preds, repos string, want map[string]swebench.Status) {
	t.Helper()
	ds0, preds0, repos := exportDemoT(t)
	bases := []string{"swebox__demo-1", "swebox__demo-2", "swebox__demo-3", "swebox__demo-7"}
	want = map[string]swebench.Status{}
	expected := map[string]swebench.Status{}
	for _, id := range bases {
		b, err := fs.ReadFile(demoFS(), path.Join("instances", id, "instance.json"))
		require.NoError(t, err)
		var f demoInstanceFile
		require.NoError(t, json.Unmarshal(b, &f))
		require.Contains(t, []swebench.Status{swebench.StatusResolved, swebench.StatusUnresolved}, f.Expected, id)
		expected[id] = f.Expected
	}
	dup := func(src string) string {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var row map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
			var id string
			require.NoError(t, json.Unmarshal(row["instance_id"], &id))
			if !slices.Contains(bases, id) {
				continue
			}
			for k := range 4 {
				nid := fmt.Sprintf("%s%02d", id, k)
				want[nid] = expected[id]
				row["instance_id"], _ = json.Marshal(nid)
				line, err := json.Marshal(row)
				require.NoError(t, err)
				out.Write(append(line, '\n'))
			}
		}
		require.NoError(t, sc.Err())
		dst := filepath.Join(t.TempDir(), filepath.Base(src))
		require.NoError(t, os.WriteFile(dst, out.Bytes(), 0o644))
		return dst
	}
	ds, preds = dup(ds0), dup(preds0)
	require.Len(t, want, 16)
	return ds, preds, repos, want
}

// seenPod is what a test saw of one pod of a run.
type seenPod struct {
	Name, Instance, Node string
	Running              time.Time // first seen running; zero if never
	Gone                 time.Time // deletion seen; zero if not yet
}

// podWatch records the sandbox pods of a run (not the isolation probes) as
// the API server reports them.
type podWatch struct {
	mu   sync.Mutex
	pods map[string]*seenPod
}

func watchRunPods(t *testing.T, runID string) *podWatch {
	t.Helper()
	cs := kubetest.Clientset(t)
	pw := &podWatch{pods: map[string]*seenPod{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	sel := swebench.LabelRun + "=" + runID + ",!swebox.probe"
	started := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for ctx.Err() == nil {
			w, err := cs.CoreV1().Pods(kubetest.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
			if first {
				close(started)
				first = false
			}
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				pw.see(p, ev.Type == watch.Deleted)
			}
			w.Stop()
		}
	}()
	<-started
	return pw
}

func (pw *podWatch) see(p *corev1.Pod, deleted bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	s := pw.pods[p.Name]
	if s == nil {
		s = &seenPod{Name: p.Name, Instance: p.Labels[swebench.LabelInstance]}
		pw.pods[p.Name] = s
	}
	if p.Spec.NodeName != "" {
		s.Node = p.Spec.NodeName
	}
	if s.Running.IsZero() && p.Status.Phase == corev1.PodRunning {
		s.Running = time.Now()
	}
	if (deleted || p.DeletionTimestamp != nil) && s.Gone.IsZero() {
		s.Gone = time.Now()
	}
}

// snapshot copies what was seen so far.
func (pw *podWatch) snapshot() []seenPod {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	out := make([]seenPod, 0, len(pw.pods))
	for _, s := range pw.pods {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// runDemo16 runs the 16-instance dataset with 8 workers on the cluster
// (kube: kubeArgs).
func runDemo16(ctx context.Context, kube []string, runID, logDir, ds, preds, repos string, out *bytes.Buffer) int {
	return run(ctx, append([]string{"-d", ds, "-p", preds, "--repos", repos, "--run_id", runID,
		"--log_dir", logDir, "--report_dir", logDir, "--max_workers", "8"}, kube...), nil, out, out)
}

// checkGradedOnce asserts that every instance has one report.json and is
// in exactly one list of the run report, with the expected verdict.
func checkGradedOnce(t *testing.T, logDir, runID string, want map[string]swebench.Status) grade.RunReport {
	t.Helper()
	rep := readRunReport(t, filepath.Join(logDir, demoModel+"."+runID+".json"))
	assert.Equal(t, 16, rep.TotalInstances)
	assert.Equal(t, 16, rep.CompletedInstances)
	got := map[string]swebench.Status{}
	count := map[string]int{}
	for status, ids := range map[swebench.Status][]string{
		swebench.StatusResolved: rep.ResolvedIDs, swebench.StatusUnresolved: rep.UnresolvedIDs,
		swebench.StatusError: rep.ErrorIDs, swebench.StatusEmptyPatch: rep.EmptyPatchIDs,
	} {
		for _, id := range ids {
			got[id] = status
			count[id]++
		}
	}
	assert.Equal(t, want, got, "verdicts")
	for id := range want {
		assert.Equal(t, 1, count[id], "%s is in exactly one list of the run report", id)
		_, err := os.Stat(filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "report.json"))
		assert.NoError(t, err, "%s has its report.json", id)
	}
	return rep
}

// With 8 workers the scheduler spreads a run's 16 pods over both nodes,
// and every instance gets its verdict.
func TestKubeSpreadsOverNodes(t *testing.T) {
	nodes := twoNodes(t)
	ds, preds, repos, want := demo16(t)
	runID := "kube-spread-" + testenv.Session(t)
	pw := watchRunPods(t, runID)
	logDir := t.TempDir()
	var out bytes.Buffer
	code := runDemo16(context.Background(), kubeArgs(t), runID, logDir, ds, preds, repos, &out)
	t.Log(out.String())
	require.Equal(t, exitOK, code)
	rep := checkGradedOnce(t, logDir, runID, want)
	assert.Nil(t, rep.Retried, "nothing was lost, nothing retried")

	used := map[string]int{}
	for _, p := range pw.snapshot() {
		t.Logf("pod %s (%s) on %s", p.Name, p.Instance, p.Node)
		used[p.Node]++
	}
	for _, n := range nodes {
		assert.Positive(t, used[n], "no pod of the run ran on node %s: %v", n, used)
	}
	assert.Zero(t, runPods(t, runID), "the run left pods behind")
}

// The kubelet of swebox-node2 stops while pods of a 16-instance run are
// running there. Every instance still gets its expected verdict, graded
// once; the instances whose pods were on node2 are the ones the run report
// records as retried, naming node2; and once the kubelet is back, no pod
// of the run is left in the API or running on the node.
func TestKubeNodeLostMidRun(t *testing.T) {
	const victimN, victim = "2", "swebox-node2"
	nodes := twoNodes(t)
	require.Contains(t, nodes, victim)
	kubetest.Script(t)
	ds, preds, repos, want := demo16(t)
	runID := "kube-lost-" + testenv.Session(t)
	pw := watchRunPods(t, runID)
	logDir := t.TempDir()

	stopped := false
	t.Cleanup(func() {
		if stopped {
			out, err := kubetest.RunScript(t, "kubelet", "start", victimN)
			assert.NoError(t, err, out)
		}
	})
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	kube := kubeArgs(t)
	go func() {
		var out bytes.Buffer
		code := runDemo16(ctx, kube, runID, logDir, ds, preds, repos, &out)
		done <- result{code, out.String()}
	}()

	// Stop the kubelet once a pod of the run runs on node2.
	var res result
	onVictim := func() bool {
		for _, p := range pw.snapshot() {
			if p.Node == victim && !p.Running.IsZero() && p.Gone.IsZero() {
				return true
			}
		}
		return false
	}
	for !onVictim() {
		select {
		case res = <-done:
			t.Log(res.out)
			t.Fatalf("the run ended (exit %d) before any of its pods ran on %s", res.code, victim)
		case <-time.After(50 * time.Millisecond):
		}
	}
	stopped = true
	kubetest.RunScriptT(t, "kubelet", "stop", victimN)
	stopAt := time.Now()
	atStop := pw.snapshot()
	t.Logf("kubelet of %s stopped at %s", victim, stopAt.UTC().Format("15:04:05.000"))

	res = <-done
	t.Log(res.out)
	require.Equal(t, exitOK, res.code)
	rep := checkGradedOnce(t, logDir, runID, want)
	assert.Contains(t, res.out, "retried:", "the summary says instances were retried")

	// What ran on node2 and was alive when its kubelet stopped.
	all := pw.snapshot()
	onVictimAny := map[string]bool{}
	victimPods := map[string]bool{}
	for _, p := range all {
		t.Logf("pod %s (%s) on %s, gone %v", p.Name, p.Instance, p.Node, !p.Gone.IsZero())
		if p.Node == victim {
			onVictimAny[p.Instance] = true
			victimPods[p.Name] = true
		}
	}
	aliveAtStop := map[string]bool{}
	for _, p := range atStop {
		if p.Node == victim && p.Gone.IsZero() {
			aliveAtStop[p.Instance] = true
		}
	}
	require.NotEmpty(t, aliveAtStop, "pods of the run were on %s when its kubelet stopped", victim)
	require.NotEmpty(t, rep.Retried, "the run report records retried instances under %s", grade.RetriedKey)
	for id, retries := range rep.Retried {
		assert.True(t, onVictimAny[id], "%s was retried but never had a pod on %s", id, victim)
		for _, r := range retries {
			assert.Equal(t, victim, r.Node, "%s: the lost attempt names the stopped node", id)
			assert.True(t, victimPods[r.Pod], "%s: the lost pod %s was one seen on %s", id, r.Pod, victim)
			assert.Contains(t, []string{"NodeNotReady", "NodeUnreachable"}, r.Reason, "%s: lost to the node, within the grace period", id)
		}
		log, err := os.ReadFile(filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "run_instance.log"))
		require.NoError(t, err)
		assert.Contains(t, string(log), "Sandbox lost: retry 1 of 2", "%s: run_instance.log records the retry", id)
		if at := logLineTime(t, filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "run_instance.log"), "Sandbox lost: retry"); !at.IsZero() {
			t.Logf("%s: loss detected and retry begun %s after the kubelet stopped", id, at.Sub(stopAt).Round(100*time.Millisecond))
		}
		assert.Equal(t, string(swebench.Outcome(want[id])), rep.Outcomes[id], "%s: graded after the retry", id)
	}
	// An instance alive on node2 at the stop and not retried had finished
	// its tests before the kubelet stopped.
	for id := range aliveAtStop {
		if _, ok := rep.Retried[id]; ok {
			continue
		}
		fin := logLineTime(t, filepath.Join(logDir, "run_evaluation", runID, demoModel, id, "run_instance.log"), "Eval script finished")
		require.False(t, fin.IsZero(), "%s was on %s at the stop, not retried, and its log shows no finished eval", id, victim)
		assert.True(t, fin.Before(stopAt), "%s: on %s at the stop and not retried, but its tests finished at %s, after the stop at %s",
			id, victim, fin.Format("15:04:05.000"), stopAt.UTC().Format("15:04:05.000"))
	}

	// The kubelet comes back and removes what the API server deleted.
	kubetest.RunScriptT(t, "kubelet", "start", victimN)
	stopped = false
	assert.Zero(t, runPods(t, runID), "the run left pods in the API")
	var listErr error
	gone := assert.Eventually(t, func() bool {
		running, err := kubetest.RunScript(t, "running", victimN)
		if listErr = err; err != nil {
			return false
		}
		for _, line := range strings.Fields(running) {
			if victimPods[strings.TrimPrefix(line, kubetest.Namespace+"/")] {
				return false
			}
		}
		return true
	}, 3*time.Minute, 2*time.Second, "containers of the run's lost pods still run on %s after its kubelet restarted", victim)
	if !gone {
		require.NoError(t, listErr, "listing the node's running containers")
	}
}

// logLineTime returns the time of the first line of a run_instance.log
// whose message starts with prefix (UTC), or zero.
func logLineTime(t *testing.T, logPath, prefix string) time.Time {
	t.Helper()
	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		ts, msg, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(msg, prefix) {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05,000", ts)
		require.NoError(t, err)
		return at
	}
	return time.Time{}
}
