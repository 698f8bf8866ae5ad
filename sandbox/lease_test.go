package sandbox_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// TestSandboxEndsWithItsOwner: a program that creates sandboxes and dies
// without removing them (log.Fatal, kill -9) leaves none running 60 s
// later, on the exec agent and without it; Prune then removes what is left.
func TestSandboxEndsWithItsOwner(t *testing.T) {
	c := testenv.Client(t)
	bin := buildOwner(t)
	api := testenv.Docker(t, c)
	type testCase struct {
		name string
		how  string
		kill bool
	}
	for _, tc := range []testCase{
		{name: "log.Fatal", how: "fatal"},
		{name: "kill -9", how: "wait", kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := testenv.Session(t)
			cmd := startOwner(t, bin, session, tc.how)
			// running counts the session's running containers; -1 when
			// the engine did not answer or the two sandboxes are not there.
			running := func() int {
				list, err := api.ContainerList(context.Background(), container.ListOptions{All: true,
					Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+session))})
				if err != nil || len(list) != 2 {
					return -1
				}
				n := 0
				for _, ct := range list {
					if ct.State == "running" {
						n++
					}
				}
				return n
			}
			assert.Equal(t, 2, running(), "both sandboxes run while their owner lives")
			if tc.kill {
				require.NoError(t, cmd.Process.Kill())
			}
			_ = cmd.Wait()
			died := time.Now()
			assert.Eventually(t, func() bool { return running() == 0 }, 60*time.Second, 200*time.Millisecond,
				"no sandbox runs 60 s after its owner died")
			t.Logf("sandboxes stopped %s after their owner died", time.Since(died).Round(10*time.Millisecond))
			pc, err := sandbox.New(sandbox.WithSession(session))
			require.NoError(t, err)
			defer pc.Close()
			_, err = pc.Prune(context.Background(), sandbox.PruneRequest{})
			require.NoError(t, err)
			left := testenv.CountLeftovers(t, pc, session)
			assert.Zero(t, left, "Prune removes what the dead owner left")
		})
	}
}

// buildOwner builds testdata/owner.
func buildOwner(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "owner")
	args := append(append([]string{"build"}, raceFlags...), "-o", bin, "./testdata/owner")
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// startOwner runs the owner program and waits until its sandboxes exist.
func startOwner(t *testing.T, bin, session, how string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{session, testenv.Image(), how}, extra...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return cmd
}

// TestPodEndsWithItsOwner: on Kubernetes too, the pods of a program killed
// with SIGKILL stop running within 60 s (they complete), and Prune
// removes them. The probe pods of a node's isolation proof that was still
// under way (on the node the sandboxes do not use) end by their own
// deadline.
func TestPodEndsWithItsOwner(t *testing.T) {
	kc := kubetest.Client(t) // its cleanup prunes the session's pods
	bin := buildOwner(t)
	session := kc.Session()
	cmd := startOwner(t, bin, session, "wait", kubetest.Kubeconfig(t), kubetest.Namespace)
	cs := kubetest.Clientset(t)
	// running counts the session's running or pending pods that match
	// selector; -1 when the API server did not answer or, for the
	// sandboxes, when the two are not there.
	running := func(selector string, want int) int {
		pods, err := cs.CoreV1().Pods(kubetest.Namespace).List(context.Background(),
			metav1.ListOptions{LabelSelector: sandbox.LabelSession + "=" + session + selector})
		if err != nil || want >= 0 && len(pods.Items) != want {
			return -1
		}
		n := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
				n++
			}
		}
		return n
	}
	const sandboxes, helpers = ",!swebox.probe,!swebox.prepull", ",swebox.probe"
	assert.Equal(t, 2, running(sandboxes, 2), "both pods run while their owner lives")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	died := time.Now()
	assert.Eventually(t, func() bool { return running(sandboxes, 2) == 0 }, 60*time.Second, 500*time.Millisecond,
		"no pod runs 60 s after its owner died")
	t.Logf("pods stopped %s after their owner died", time.Since(died).Round(10*time.Millisecond))
	assert.Eventually(t, func() bool { return running(helpers, -1) == 0 }, 150*time.Second, time.Second,
		"a probe pod runs past its deadline (120 s)")
}
