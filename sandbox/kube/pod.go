package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/internal/seam"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Names and labels of the objects the Kubernetes backend creates.
const (
	// LabelNetwork is "none" on pods that the namespace's default-deny
	// NetworkPolicy isolates, and "open" on pods whose spec relaxes the
	// network.
	LabelNetwork = "swebox.network"
	// DefaultNamespace is the namespace sandboxes run in unless
	// WithKubernetes names another.
	DefaultNamespace = "swebox"
	// DefaultPodDeadline is a sandbox pod's wall-clock cap
	// (activeDeadlineSeconds): past it the kubelet kills the pod.
	DefaultPodDeadline = 12 * time.Hour
	// DefaultCPURequest and DefaultMemoryRequest are what a sandbox pod
	// asks the scheduler for (never more than its limits), so that a node
	// takes several sandboxes while each may burst to its limits.
	DefaultCPURequest    = 250 // milli-CPUs
	DefaultMemoryRequest = 256 << 20

	kubeContainer  = "sandbox"
	kubeSeeder     = "seed"
	kubePolicyName = "swebox-default-deny"
	kubeSeedMount  = "/swebox-seed"
)

// podFor translates a defaulted, valid spec into a Pod labelled with labels
// (see labelsFor). Each hardening
// default maps to a field; what has no field (pids, open files, file size)
// is enforced as described where it is applied.
//
//   - User: runAsUser/runAsGroup/fsGroup, runAsNonRoot unless sandbox.Relax.Root
//   - read-only root: readOnlyRootFilesystem
//   - capabilities: drop ALL, add sandbox.Relax.CapAdd
//   - no-new-privileges: allowPrivilegeEscalation false
//   - seccomp: RuntimeDefault
//   - memory and CPU: limits (requests are smaller, see DefaultCPURequest)
//   - /tmp and HOME: memory-backed emptyDirs with TmpSize as sizeLimit
//   - init that reaps: shareProcessNamespace, the pause process is PID 1
//   - network none: label swebox.network=none, selected by the namespace's
//     default-deny NetworkPolicy (proven before use, see startProofs)
//   - no credentials: automountServiceAccountToken and enableServiceLinks off
//   - wall clock: activeDeadlineSeconds
//   - pids: the kubelet's podPidsLimit (per node, not per pod)
//   - open files and file size: ulimit in the exec wrapper of every command
//   - a volume filled from the image: an emptyDir that an init container of
//     the image fills (seedScript), with the same context, resources and
//     read-only root, plus seedCaps when it runs as root
func podFor(s sandbox.Spec, cmd []string, labels map[string]string, pull corev1.PullPolicy) (*corev1.Pod, error) {
	uid, gid, _ := seam.ParseUser(s.User)
	l := s.Limits
	no, yes := false, true
	u, g := int64(uid), int64(gid)
	nonRoot := uid != 0
	podLabels, annotations := labelsFor(labels)
	podLabels[LabelNetwork] = "none"
	if s.Relax.Network != "" {
		podLabels[LabelNetwork] = "open"
	}
	deadline := int64(DefaultPodDeadline / time.Second)
	grace := int64(1)
	memLimit := resource.NewQuantity(l.Memory, resource.BinarySI)
	cpuLimit := resource.NewMilliQuantity(l.NanoCPUs/1e6, resource.DecimalSI)
	memReq := resource.NewQuantity(min(l.Memory, DefaultMemoryRequest), resource.BinarySI)
	cpuReq := resource.NewMilliQuantity(min(l.NanoCPUs/1e6, DefaultCPURequest), resource.DecimalSI)
	tmpSize := resource.NewQuantity(l.TmpSize, resource.BinarySI)

	env := []corev1.EnvVar{{Name: "HOME", Value: sandbox.HomeDir}}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, corev1.EnvVar{Name: k, Value: s.Env[k]})
	}
	env = append(env, corev1.EnvVar{Name: seam.MarkerVar, Value: seam.MainMarker})
	caps := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	for _, c := range s.Relax.CapAdd {
		caps.Add = append(caps.Add, corev1.Capability(strings.TrimPrefix(strings.ToUpper(c), "CAP_")))
	}
	sc := &corev1.SecurityContext{
		RunAsUser:                &u,
		RunAsGroup:               &g,
		RunAsNonRoot:             &nonRoot,
		ReadOnlyRootFilesystem:   &yes,
		AllowPrivilegeEscalation: &no,
		Privileged:               &no,
		Capabilities:             caps,
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if s.Relax.WritableRootFS {
		sc.ReadOnlyRootFilesystem = &no
	}
	if s.Relax.NewPrivileges {
		sc.AllowPrivilegeEscalation = &yes
	}
	memDir := func(name string, size *resource.Quantity) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: size},
		}}
	}
	vols := []corev1.Volume{memDir("tmp", tmpSize), memDir("home", tmpSize)}
	mounts := []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}, {Name: "home", MountPath: sandbox.HomeDir}}
	if s.Workspace != "" {
		// The host directory is copied in after the pod starts: a cluster's
		// nodes do not share the caller's filesystem.
		vols = append(vols, corev1.Volume{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "workspace", MountPath: s.WorkspaceTarget})
	}
	var inits []corev1.Container
	for i, m := range s.Mounts {
		name := fmt.Sprintf("mount%d", i)
		field := fmt.Sprintf("Mounts[%d]", i)
		switch m.Type {
		case "tmpfs":
			size := m.TmpSize
			if size == 0 {
				size = 64 << 20
			}
			vols = append(vols, memDir(name, resource.NewQuantity(size, resource.BinarySI)))
		case "volume":
			if m.Source != "" {
				return nil, &sandbox.SpecError{Field: field + ".Source", Reason: "named volumes are not supported on Kubernetes; leave Source empty for a volume filled from the image"}
			}
			// An anonymous volume filled from the image, as Docker does: an
			// emptyDir that an init container of the same image seeds.
			vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
			inits = append(inits, corev1.Container{
				Name:            fmt.Sprintf("%s%d", kubeSeeder, i),
				Image:           s.Image,
				ImagePullPolicy: pull,
				Command:         []string{"/bin/sh", "-c", seedScript, "swebox-seed", path.Clean(m.Target), kubeSeedMount, s.Image, strconv.Itoa(uid)},
				SecurityContext: seederContext(sc, uid),
				// What the seeder printed becomes the termination message
				// when it fails, and so part of the PodError.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Resources:                resources(memLimit, cpuLimit, memReq, cpuReq),
				VolumeMounts:             []corev1.VolumeMount{{Name: name, MountPath: kubeSeedMount}},
			})
		default:
			return nil, &sandbox.SpecError{Field: field + ".Type", Reason: "bind mounts need the caller's filesystem, which a cluster's nodes do not share; copy files in with CopyIn"}
		}
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path.Clean(m.Target), ReadOnly: m.ReadOnly})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "swebox-", Labels: podLabels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			ShareProcessNamespace:         &yes,
			ActiveDeadlineSeconds:         &deadline,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      &u,
				RunAsGroup:     &g,
				RunAsNonRoot:   &nonRoot,
				FSGroup:        &g,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			InitContainers: inits,
			Containers: []corev1.Container{{
				Name:            kubeContainer,
				Image:           s.Image,
				ImagePullPolicy: pull,
				Command:         cmd,
				Env:             env,
				WorkingDir:      s.WorkingDir,
				SecurityContext: sc,
				Resources:       resources(memLimit, cpuLimit, memReq, cpuReq),
				VolumeMounts:    mounts,
			}},
			Volumes: vols,
		},
	}
	if s.Relax.WritableRootFS {
		// The container's writable layer (and its logs) count toward
		// ephemeral-storage, which the kubelet bounds by evicting the pod:
		// a lost sandbox, never a verdict.
		pod.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(s.Limits.Disk, resource.BinarySI)
	}
	if s.Relax.NoInit {
		pod.Spec.ShareProcessNamespace = &no
	}
	if s.Runtime != "" {
		rt := s.Runtime
		pod.Spec.RuntimeClassName = &rt
	}
	if s.Name != "" {
		pod.GenerateName, pod.Name = "", s.Name
	}
	return pod, nil
}

// seedScript copies the image's directory $1 into the emptyDir mounted at
// $2, keeping owners and modes; an image without $1 leaves the emptyDir
// empty, as Docker leaves a volume over a missing directory. A failure names
// the directory and the image ($3).
//
// As root ($4 = 0) it copies the directory itself, so that the volume also
// takes the directory's own owner and mode. The kubelet makes the emptyDir
// setgid for the pod's fsGroup, and directories made in a setgid directory
// inherit the bit, which cp keeps; so the bit is cleared first. Another user
// cannot change the kubelet's directory: it copies what the directory holds,
// and the volume stays the emptyDir, writable by the pod's group.
const seedScript = `src=$1; dst=$2; img=$3; uid=$4
fail() { echo "swebox-seed: copying $src of image $img into its volume failed" >&2; exit 1; }
[ -d "$src" ] || exit 0
if [ "$uid" = 0 ]; then
  chmod g-s "$dst" && cp -a "$src/." "$dst/" || fail
  exit 0
fi
cd "$src" || fail
set --
for f in * .[!.]* ..?*; do
  if [ -e "$f" ] || [ -L "$f" ]; then set -- "$@" "$f"; fi
done
[ $# -eq 0 ] || cp -a "$@" "$dst/" || fail`

// seedCaps are the capabilities a seeder running as root keeps, so that the
// copy has the owners and modes the image has, as when Docker fills a volume
// from an image: change owners (CHOWN), set modes and times of files it does
// not own (FOWNER), keep setgid bits (FSETID), and read files and directories
// that other users own (DAC_OVERRIDE). Its root filesystem is read-only, so it
// can write nothing but the volume; a seeder running as another user gets
// none (Kubernetes has no ambient capabilities) and copies what it can read,
// owned by itself.
var seedCaps = []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID"}

// seederContext is the sandbox container's security context, with seedCaps
// added when it runs as root.
func seederContext(sc *corev1.SecurityContext, uid int) *corev1.SecurityContext {
	out := sc.DeepCopy()
	if uid != 0 {
		return out
	}
	for _, c := range seedCaps {
		if !slices.Contains(out.Capabilities.Add, c) {
			out.Capabilities.Add = append(out.Capabilities.Add, c)
		}
	}
	return out
}

func resources(memLimit, cpuLimit, memReq, cpuReq *resource.Quantity) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: *memLimit, corev1.ResourceCPU: *cpuLimit},
		Requests: corev1.ResourceList{corev1.ResourceMemory: *memReq, corev1.ResourceCPU: *cpuReq},
	}
}

// labelValue is the label value that stands for v: v itself when it is a
// valid label value, else a readable prefix of v and a hash of all of it.
// Kubernetes caps label values at 63 characters of [A-Za-z0-9-_.], so
// cutting and replacing alone would make distinct values one ("exp:1" and
// "exp_1", or two long run ids that differ only at the end), and a selector
// of one would select the other's pods. The full value goes into an
// annotation of the same key (labelsFor), which List compares before it
// returns a pod.
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	b := []byte(v)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(v))
	h := "h" + hex.EncodeToString(sum[:8])
	prefix := strings.Trim(string(b[:min(len(b), 63-len(h)-1)]), "-_.")
	if prefix == "" {
		return h
	}
	return prefix + "-" + h
}

// labelsFor returns the labels that stand for want and the annotations
// that hold its exact values.
func labelsFor(want map[string]string) (labels, annotations map[string]string) {
	labels = make(map[string]string, len(want))
	annotations = make(map[string]string, len(want))
	for k, v := range want {
		labels[k] = labelValue(v)
		annotations[k] = v
	}
	return labels, annotations
}

// exactLabels returns the values that labelsFor encoded in meta: the
// annotation where there is one, else the label (objects of older versions
// carry only labels, valid ones verbatim).
func exactLabels(meta metav1.ObjectMeta) map[string]string {
	out := make(map[string]string, len(meta.Labels))
	for k, v := range meta.Labels {
		if full, ok := meta.Annotations[k]; ok && labelValue(full) == v {
			v = full
		}
		out[k] = v
	}
	return out
}

// matches reports whether the exact labels have every value of want; an
// empty value in want matches any value of its key.
func matches(exact, want map[string]string) bool {
	for k, v := range want {
		got, ok := exact[k]
		if !ok || v != "" && got != v {
			return false
		}
	}
	return true
}
