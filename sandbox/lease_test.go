//go:build unix

package sandbox_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// TestSandboxEndsWithItsOwner: a program that creates sandboxes (each with
// a volume) and dies without removing them (log.Fatal, kill -9) leaves
// nothing on the engine 60 s later, on the exec agent and without it: the
// containers are gone from `docker ps -a` and their volumes from `docker
// volume ls`, with no other program removing them (the owner runs in a
// pid namespace of its own, so that no other client can tell it died).
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
			cmd := startIsolatedOwner(t, bin, session, tc.how)
			t.Cleanup(func() { pruneSession(t, session) })
			left := func() (containers, running, volumes int) {
				return sessionObjects(t, api, session)
			}
			ct, run, vol := left()
			require.Equal(t, []int{2, 2, 2}, []int{ct, run, vol}, "both sandboxes and their volumes exist, running, while their owner lives")
			if tc.kill {
				require.NoError(t, killGroup(cmd))
			}
			_ = cmd.Wait()
			died := time.Now()
			assert.Eventually(t, func() bool {
				ct, _, vol := left()
				return ct == 0 && vol == 0
			}, 60*time.Second, 200*time.Millisecond, "the sandboxes and their volumes are gone 60 s after their owner died")
			ct, run, vol = left()
			t.Logf("%s after their owner died: %d containers (%d running), %d volumes left",
				time.Since(died).Round(10*time.Millisecond), ct, run, vol)
		})
	}
}

// sessionObjects counts the session's containers (all, as `docker ps -a`;
// and those running) and volumes (`docker volume ls`) on the engine.
func sessionObjects(t *testing.T, api *client.Client, session string) (containers, running, volumes int) {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+session))
	list, err := api.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	require.NoError(t, err)
	for _, ct := range list {
		if ct.State == "running" {
			running++
		}
	}
	vols, err := api.VolumeList(context.Background(), volume.ListOptions{Filters: f})
	require.NoError(t, err)
	return len(list), running, len(vols.Volumes)
}

// pruneSession removes what a test's session left, whatever the outcome.
func pruneSession(t *testing.T, session string) {
	pc, err := sandbox.New(sandbox.WithSession(session))
	require.NoError(t, err)
	defer pc.Close()
	_, err = pc.Prune(context.Background(), sandbox.PruneRequest{})
	assert.NoError(t, err)
}

// buildOwner builds testdata/owner, in the package's source directory
// where it still exists: the test binary may run elsewhere (CI runs the
// Podman tests in a copy of the package's directory, outside the module).
func buildOwner(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "owner")
	args := append(append([]string{"build"}, raceFlags...), "-o", bin, "./testdata/owner")
	cmd := exec.Command("go", args...)
	if _, file, _, ok := runtime.Caller(0); ok {
		if _, err := os.Stat(filepath.Join(filepath.Dir(file), "testdata", "owner")); err == nil {
			cmd.Dir = filepath.Dir(file)
		}
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// startOwner runs the owner program and waits until its sandboxes exist.
func startOwner(t *testing.T, bin, session, how string, extra ...string) *exec.Cmd {
	t.Helper()
	return startOwnerCmd(t, exec.Command(bin, append([]string{session, testenv.Image(), how}, extra...)...))
}

// startIsolatedOwner is startOwner with the owner in a pid namespace of its
// own, where no other program on the machine can tell that it died: the
// clients of other programs (other tests that run meanwhile) leave its
// sandboxes alone, so that what removes them is the engine. Without
// unshare(1) and the privilege to use it, the test skips.
//
// The namespace gets the machine's pid_max where it has one of its own
// (Linux 6.14 and later start a namespace at the kernel's maximum,
// 4194304): the owner's client asks a rootful Podman for a process limit of
// pid_max (adaptPodman), and a runtime that cannot raise its own limit
// (root without CAP_SYS_RESOURCE) cannot set that one. Outside the test no
// program of the machine sees another pid_max.
func startIsolatedOwner(t *testing.T, bin, session, how string) *exec.Cmd {
	t.Helper()
	if err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run(); err != nil {
		cienv.Skip(t, "cannot run the owner in a pid namespace of its own (unshare --pid: %v)", err)
	}
	pidMax, err := os.ReadFile("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	const setPidMax = `f=/proc/sys/kernel/pid_max; [ "$(cat $f)" = "$1" ] || echo "$1" > $f || exit 1; shift; exec "$@"`
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL",
		"/bin/sh", "-c", setPidMax, "sh", strings.TrimSpace(string(pidMax)), bin, session, testenv.Image(), how)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startOwnerCmd(t, cmd)
}

// killGroup kills cmd's process group with SIGKILL (kill -9).
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

func startOwnerCmd(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
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
