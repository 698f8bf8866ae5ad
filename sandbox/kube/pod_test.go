package kube

import (
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPodForMapsEachDefault(t *testing.T) {
	pod, err := podFor(defaults(t, sandbox.Spec{Image: "img"}), seam.Keepalive, map[string]string{sandbox.LabelManaged: "true"}, corev1.PullNever)
	require.NoError(t, err)
	ps := pod.Spec
	c := ps.Containers[0]
	sc := c.SecurityContext
	type testCase struct {
		name string
		got  any
		want any
	}
	for _, tc := range []testCase{
		{"uid", *sc.RunAsUser, int64(1000)},
		{"gid", *sc.RunAsGroup, int64(1000)},
		{"non-root", *sc.RunAsNonRoot, true},
		{"read-only root", *sc.ReadOnlyRootFilesystem, true},
		{"no privilege escalation", *sc.AllowPrivilegeEscalation, false},
		{"capabilities", sc.Capabilities.Drop, []corev1.Capability{"ALL"}},
		{"seccomp", sc.SeccompProfile.Type, corev1.SeccompProfileTypeRuntimeDefault},
		{"memory limit", c.Resources.Limits.Memory().Value(), int64(sandbox.DefaultMemory)},
		{"cpu limit", c.Resources.Limits.Cpu().MilliValue(), int64(2000)},
		{"cpu request", c.Resources.Requests.Cpu().MilliValue(), int64(DefaultCPURequest)},
		{"shared pid namespace", *ps.ShareProcessNamespace, true},
		{"no token", *ps.AutomountServiceAccountToken, false},
		{"no service links", *ps.EnableServiceLinks, false},
		{"deadline", *ps.ActiveDeadlineSeconds, int64(DefaultPodDeadline.Seconds())},
		{"restart", ps.RestartPolicy, corev1.RestartPolicyNever},
		{"pull", c.ImagePullPolicy, corev1.PullNever},
		{"network label", pod.Labels[LabelNetwork], "none"},
		{"managed label", pod.Labels[sandbox.LabelManaged], "true"},
		{"tmp medium", ps.Volumes[0].EmptyDir.Medium, corev1.StorageMediumMemory},
		{"tmp size", ps.Volumes[0].EmptyDir.SizeLimit.Value(), int64(sandbox.DefaultTmpSize)},
		{"home mount", c.VolumeMounts[1].MountPath, sandbox.HomeDir},
		{"home env", c.Env[0], corev1.EnvVar{Name: "HOME", Value: sandbox.HomeDir}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
}

func TestPodForRelaxations(t *testing.T) {
	s := defaults(t, sandbox.Spec{Image: "img", User: "0:0", Relax: sandbox.Relax{
		Root: true, WritableRootFS: true, NewPrivileges: true, CapAdd: []string{"CAP_CHOWN"}, Network: "bridge", NoInit: true,
	}})
	pod, err := podFor(s, seam.Keepalive, nil, corev1.PullIfNotPresent)
	require.NoError(t, err)
	sc := pod.Spec.Containers[0].SecurityContext
	assert.False(t, *sc.RunAsNonRoot)
	assert.False(t, *sc.ReadOnlyRootFilesystem)
	assert.True(t, *sc.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"CHOWN"}, sc.Capabilities.Add)
	assert.Equal(t, "open", pod.Labels[LabelNetwork])
	assert.False(t, *pod.Spec.ShareProcessNamespace)
}

func TestPodForMounts(t *testing.T) {
	type testCase struct {
		name    string
		mount   sandbox.Mount
		wantErr string
	}
	for _, tc := range []testCase{
		{"anonymous volume seeded from the image", sandbox.Mount{Type: "volume", Target: "/testbed"}, ""},
		{"tmpfs", sandbox.Mount{Type: "tmpfs", Target: "/scratch"}, ""},
		{"bind refused", sandbox.Mount{Source: "/host", Target: "/x"}, "Mounts[0].Type"},
		{"named volume refused", sandbox.Mount{Type: "volume", Source: "v", Target: "/x"}, "Mounts[0].Source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := podFor(defaults(t, sandbox.Spec{Image: "img", Mounts: []sandbox.Mount{tc.mount}}), seam.Keepalive, nil, corev1.PullNever)
			if tc.wantErr != "" {
				var se *sandbox.SpecError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.wantErr, se.Field)
				return
			}
			require.NoError(t, err)
			if tc.mount.Type == "volume" {
				require.Len(t, pod.Spec.InitContainers, 1)
				assert.Equal(t, kubeSeedMount, pod.Spec.InitContainers[0].VolumeMounts[0].MountPath)
			}
			assert.Equal(t, tc.mount.Target, pod.Spec.Containers[0].VolumeMounts[2].MountPath)
		})
	}
}

// The seeder runs the sandbox's image with the sandbox container's security
// context and resources; as root it keeps the capabilities that let the copy
// keep the image's owners and modes, and nothing else changes.
func TestPodForSeeder(t *testing.T) {
	type testCase struct {
		name     string
		user     string
		uid      string
		wantCaps []corev1.Capability
	}
	for _, tc := range []testCase{
		{"uid 1000", "", "1000", nil},
		{"root", "0:0", "0", seedCaps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := defaults(t, sandbox.Spec{Image: "img", User: tc.user, Relax: sandbox.Relax{Root: tc.user != ""}, Mounts: []sandbox.Mount{{Type: "volume", Target: "/testbed/"}}})
			pod, err := podFor(s, seam.Keepalive, nil, corev1.PullNever)
			require.NoError(t, err)
			require.Len(t, pod.Spec.InitContainers, 1)
			seed, main := pod.Spec.InitContainers[0], pod.Spec.Containers[0]
			assert.Equal(t, "img", seed.Image)
			assert.Equal(t, corev1.PullNever, seed.ImagePullPolicy)
			assert.Equal(t, []string{"/bin/sh", "-c", seedScript, "swebox-seed", "/testbed", kubeSeedMount, "img", tc.uid}, seed.Command)
			assert.Equal(t, corev1.TerminationMessageFallbackToLogsOnError, seed.TerminationMessagePolicy)
			assert.Equal(t, main.Resources, seed.Resources)
			assert.Equal(t, tc.wantCaps, seed.SecurityContext.Capabilities.Add)
			assert.Empty(t, main.SecurityContext.Capabilities.Add, "the sandbox container keeps no capability")
			want := main.SecurityContext.DeepCopy()
			want.Capabilities.Add = tc.wantCaps
			assert.Equal(t, want, seed.SecurityContext, "otherwise the same context as the sandbox container")
		})
	}
}

// Label values stand for exact values: valid ones verbatim, others by a
// hash, so that values Kubernetes would cut or rewrite alike stay apart;
// List then compares the annotations that hold the full values.
func TestLabelValue(t *testing.T) {
	long := strings.Repeat("sweb-lite-gold-", 5) + "2026-11-27"
	type testCase struct {
		name     string
		a, b     string // distinct values whose labels must differ
		verbatim bool   // a is a valid label value, kept as it is
	}
	for _, tc := range []testCase{
		{name: "valid", a: "t-TestX-120000.000001", b: "t-TestX-120000.000002", verbatim: true},
		{name: "replaced characters", a: "exp:1", b: "exp_1"},
		{name: "cut at 63", a: long + "__attempt-1", b: long + "__attempt-2"},
		{name: "nothing readable", a: string(make([]byte, 70)), b: string(make([]byte, 71))},
		{name: "slashes", a: "a/b", b: "a_b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			la, lb := labelValue(tc.a), labelValue(tc.b)
			assert.NotEqual(t, la, lb)
			for _, l := range []string{la, lb} {
				assert.Empty(t, validation.IsValidLabelValue(l), l)
			}
			assert.Equal(t, tc.verbatim, la == tc.a)
			labels, ann := labelsFor(map[string]string{"swebox.run": tc.a})
			meta := metav1.ObjectMeta{Labels: labels, Annotations: ann}
			exact := exactLabels(meta)
			assert.Equal(t, tc.a, exact["swebox.run"])
			assert.True(t, matches(exact, map[string]string{"swebox.run": tc.a}))
			assert.False(t, matches(exact, map[string]string{"swebox.run": tc.b}))
			assert.True(t, matches(exact, map[string]string{"swebox.run": ""}))
			assert.False(t, matches(exact, map[string]string{"swebox.session": ""}))
		})
	}
	// An annotation that does not belong to its label (edited by hand) is
	// not believed.
	meta := metav1.ObjectMeta{Labels: map[string]string{"swebox.run": "exp_1"}, Annotations: map[string]string{"swebox.run": "exp:1"}}
	assert.Equal(t, "exp_1", exactLabels(meta)["swebox.run"])
}

func TestAckWriter(t *testing.T) {
	type testCase struct {
		name   string
		writes []string
		out    string
		code   int
		ok     bool
	}
	long := strings.Repeat("x", 100)
	for _, tc := range []testCase{
		{"ack alone", []string{"swebox-ack:0\n"}, "", 0, true},
		{"output then ack", []string{"hello\n", "swebox-ack:3\n"}, "hello\n", 3, true},
		{"long output in pieces", []string{long, long, "swebox-ack:1\n"}, long + long, 1, true},
		{"no ack", []string{long}, long, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			a := &ackWriter{w: &out}
			for _, w := range tc.writes {
				_, err := a.Write([]byte(w))
				require.NoError(t, err)
			}
			code, ok := a.finish()
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.out, out.String())
		})
	}
}

// defaults returns s with its defaults, as package
// sandbox lends it to a bound backend.
func defaults(t *testing.T, s sandbox.Spec) sandbox.Spec {
	t.Helper()
	b := &Backend{}
	c, err := sandbox.New(sandbox.WithBackend(b))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return b.env.Defaults(s)
}
