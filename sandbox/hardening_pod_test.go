package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

// The kernel's seccomp filter is on for every command: the engine's
// default profile on Docker, RuntimeDefault on Kubernetes.
func TestSeccompFilterIsOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"grep", "^Seccomp:", "/proc/self/status"}})
		assert.Equal(t, "Seccomp:\t2\n", res.Stdout.String(), "mode 2 is a filter; 0 would be none")
	})
}

// A sandbox pod holds no credential of the cluster and learns nothing of
// its services: no service-account token is mounted and no service's
// address is put in its environment. The control is a plain pod of the
// same image in the same namespace, with Kubernetes' defaults, which sees
// both: so the probe can see them where they are.
func TestPodHasNoTokenAndNoServiceLinks(t *testing.T) {
	cs := kubetest.Clientset(t)
	c := kubetest.Client(t)
	ctx := context.Background()
	svcName := "swebox-links-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	envName := strings.ToUpper(strings.ReplaceAll(svcName, "-", "_")) + "_SERVICE_HOST"
	_, err := cs.CoreV1().Services(kubetest.Namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName, Labels: map[string]string{sandbox.LabelSession: c.Session()}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, cs.CoreV1().Services(kubetest.Namespace).Delete(context.Background(), svcName, metav1.DeleteOptions{}))
	})
	const probe = `ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; env`

	sb := createT(t, c, sandbox.Spec{Policy: sandbox.AllowAll()})
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"sh", "-c", probe}})
	assert.Contains(t, res.Stdout.String(), "No such file or directory", "no service-account token is mounted")
	assert.NotContains(t, res.Stdout.String(), "token")
	assert.NotContains(t, res.Stdout.String(), envName, "no service link in the environment")

	// The control: Kubernetes' defaults mount the token and add the links.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "swebox-control-", Labels: map[string]string{
			sandbox.LabelManaged: "true", sandbox.LabelSession: c.Session(), kube.LabelNetwork: "none"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "probe", Image: testImage(), ImagePullPolicy: corev1.PullNever,
				Command: []string{"sh", "-c", probe}}},
		},
	}
	created, err := cs.CoreV1().Pods(kubetest.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		zero := int64(0)
		_ = cs.CoreV1().Pods(kubetest.Namespace).Delete(context.Background(), created.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	require.Eventually(t, func() bool {
		p, err := cs.CoreV1().Pods(kubetest.Namespace).Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
	}, 3*time.Minute, 200*time.Millisecond, "the control pod did not finish")
	out, err := cs.CoreV1().Pods(kubetest.Namespace).GetLogs(created.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(out), "token", "the control pod sees its token, so the probe would see one")
	assert.Contains(t, string(out), envName+"=", "the control pod sees the service link, so the probe would see one")
}

// The open-file and file-size limits hold for every command, and a command
// cannot raise them: on Docker they are the container's rlimits, on
// Kubernetes (which has no field for them) the wrapper every command starts
// under sets them, soft and hard. The control is the same probe under the
// defaults, which gets further.
func TestFileLimitsHold(t *testing.T) {
	const probe = `
import os, resource
fds = []
try:
    while True:
        fds.append(os.open('/dev/null', os.O_RDONLY))
except OSError as e:
    print('open', len(fds) + 3, e.strerror)
for fd in fds:
    os.close(fd)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
    print('raised')
except (OSError, ValueError) as e:
    print('raise refused')
with open('/tmp/big', 'wb') as f:
    try:
        for _ in range(4):
            f.write(b'x' * (1 << 20)); f.flush()
        print('wrote 4 MiB')
    except OSError as e:
        print('write', e.strerror, os.path.getsize('/tmp/big'))
`
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		tight := createT(t, c, sandbox.Spec{Limits: sandbox.Limits{NoFile: 64, FileSize: 1 << 20}})
		res := execT(t, tight, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		assert.Equal(t, "open 64 Too many open files\nraise refused\nwrite File too large 1048576\n", res.Stdout.String(), res.Stderr.String())

		loose := createT(t, c, sandbox.Spec{})
		res = execT(t, loose, sandbox.ExecRequest{Cmd: []string{"python3", "-c", probe}})
		assert.Equal(t, "open 4096 Too many open files\nraise refused\nwrote 4 MiB\n", res.Stdout.String(), res.Stderr.String())
	})
}

// /tmp is memory-backed and size-limited on both backends: a tmpfs on
// Docker, an emptyDir with a sizeLimit on Kubernetes.
func TestTmpIsSizeLimited(t *testing.T) {
	const fill = `
import os
n = 0
try:
    with open('/tmp/fill', 'wb') as f:
        for _ in range(32):
            f.write(b'x' * (1 << 20)); f.flush(); n += 1
    print('wrote', n, 'MiB')
except OSError as e:
    print(e.strerror, 'after', n, 'MiB')
`
	forEachBackend(t, func(t *testing.T, c *sandbox.Client, kube bool) {
		sb := createT(t, c, sandbox.Spec{Limits: sandbox.Limits{TmpSize: 8 << 20}})
		res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"python3", "-c", fill}})
		assert.Contains(t, res.Stdout.String(), "No space left on device after", res.Stderr.String())
		res = execT(t, sb, sandbox.ExecRequest{Cmd: []string{"grep", " /tmp ", "/proc/mounts"}})
		assert.Contains(t, res.Stdout.String(), "tmpfs /tmp tmpfs", "memory-backed")

		loose := createT(t, c, sandbox.Spec{})
		res = execT(t, loose, sandbox.ExecRequest{Cmd: []string{"python3", "-c", fill}})
		assert.Equal(t, "wrote 32 MiB\n", res.Stdout.String(), "the default size holds the same file")
	})
}

// A setuid-root binary does not raise a pod's privileges: the image, built
// with Docker and copied into every node of the test cluster, holds a
// setuid copy of id(1). The control relaxes NewPrivileges and sees uid 0.
func TestSetuidDoesNotEscalateInAPod(t *testing.T) {
	kc := kubetest.Client(t)
	kubetest.Script(t)
	dc := newClient(t)
	ctx := context.Background()
	ref := "swebox-test/setuid-pod:" + strings.ToLower(kc.Session()[len(kc.Session())-6:])
	dockerfile := "FROM " + testImage() + "\nRUN cp /usr/bin/id /usr/local/bin/suid-id && chmod 4755 /usr/local/bin/suid-id\n"
	_, err := dc.BuildImage(ctx, sandbox.BuildRequest{Context: tarOf(t, map[string]string{"Dockerfile": dockerfile}), Tags: []string{ref}, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, dc.RemoveImage(context.Background(), ref)) })
	kubetest.RunScriptT(t, "import", ref)
	t.Cleanup(func() { kubetest.RunScriptT(t, "unimport", ref) })

	sb := createT(t, kc, sandbox.Spec{Image: ref, Policy: sandbox.AllowAll()})
	res := execT(t, sb, sandbox.ExecRequest{Cmd: []string{"/usr/local/bin/suid-id", "-u"}})
	assert.Equal(t, "1000\n", res.Stdout.String(), "allowPrivilegeEscalation: false keeps the euid")

	loose := createT(t, kc, sandbox.Spec{Image: ref, Relax: sandbox.Relax{NewPrivileges: true}, Policy: sandbox.AllowAll()})
	res = execT(t, loose, sandbox.ExecRequest{Cmd: []string{"/usr/local/bin/suid-id", "-u"}})
	assert.Equal(t, "0\n", res.Stdout.String(), "the probe must see setuid work when allowed")
}
