package swebench_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/swebox/swebox/internal/kubetest"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	kubebackend "github.com/swebox/swebox/sandbox/kube"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// k8sLocal returns a function that runs the test cluster's script, which
// copies images from Docker into the nodes and removes them.
func k8sLocal(t testing.TB) func(args ...string) {
	t.Helper()
	kubetest.Script(t)
	return func(args ...string) {
		t.Helper()
		kubetest.RunScriptT(t, args...)
	}
}

// manifest lists every path under /testbed with its type and mode, numeric
// owner, and size and modification time (files) or target (symbolic links).
const manifest = `cd /testbed && find . \( -type f -printf '%p %M %U:%G %s %T@\n' \) -o \( ! -type f -printf '%p %M %U:%G %l\n' \) | LC_ALL=C sort`

// The probes run from inside a sandbox: each prints what it found.
const (
	// writeProbe writes to /testbed and commits with git, as the
	// evaluation's patch and tests do.
	writeProbe = `id -u; echo x > /testbed/new-file && cat /testbed/new-file && git -C /testbed status --porcelain new-file`
	// rootProbe tries to write to the image's root filesystem.
	rootProbe = `touch /usr/swebox-probe 2>&1; echo "exit $?"`
)

// Prebuilt mode on the cluster: the official-style instance image, built
// with Docker and copied into the nodes, gives the verdicts Docker gives on
// the same image (resolved with the gold patch, unresolved with a
// regression); the evaluation's pod has a writable root, copy-on-write
// over the image, with /testbed writable and no copy; with a read-only root
// (ReadOnlyRootSpec, task environments) /testbed in the pod holds the
// image's files with their modes and owners, as Docker's volume does, and
// is writable while the root filesystem is not; an image without /testbed
// gets an empty one; a copy that fails names the image and the directory;
// no pod is left.
func TestKubePrebuiltMode(t *testing.T) {
	script := k8sLocal(t)
	kube := kubetest.Client(t)
	f := newFixture(t)
	ctx := context.Background()

	// One image serves both instances (they share the base commit), under
	// the names prebuilt mode looks up.
	ns := "swebox-kube-" + strings.ToLower(strings.NewReplacer(".", "").Replace(f.client.Session()[len(f.client.Session())-8:]))
	refs := []string{ns + "/sweb.eval.x86_64.calc_1776_calc-1:latest", ns + "/sweb.eval.x86_64.calc_1776_calc-3:latest"}
	buildCtx := tarDir(t, filepath.Join(f.project.Sources, "swebox-test__calc"), "testbed")
	// Files whose modes and owners the copy must keep: an executable, a
	// setgid directory, a link, and a tree of uid 1000's that only its owner
	// may enter.
	for _, h := range []*tar.Header{
		{Name: "testbed/tools/", Typeflag: tar.TypeDir, Mode: 0o2775},
		{Name: "testbed/tools/check.sh", Typeflag: tar.TypeReg, Mode: 0o755, Size: 3},
		{Name: "testbed/tools/check", Typeflag: tar.TypeSymlink, Linkname: "check.sh", Mode: 0o777},
		{Name: "owned/private/", Typeflag: tar.TypeDir, Mode: 0o700},
		{Name: "owned/private/key", Typeflag: tar.TypeReg, Mode: 0o600, Size: 3},
	} {
		require.NoError(t, buildCtx.tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := buildCtx.tw.Write([]byte("ok\n"))
			require.NoError(t, err)
		}
	}
	df := "FROM " + testenv.Image() + "\nCOPY testbed /testbed\nCOPY --chown=1000:1000 owned /testbed/owned\nWORKDIR /testbed\n"
	addToTar(t, buildCtx, "Dockerfile", df)
	_, err := f.client.BuildImage(ctx, sandbox.BuildRequest{Context: buildCtx.buf, Tags: refs, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, ref := range refs {
			assert.NoError(t, f.client.RemoveImage(context.Background(), ref))
		}
	})
	script(append([]string{"import"}, refs...)...)
	t.Cleanup(func() { script(append([]string{"unimport"}, refs...)...) })

	preds := []dataset.Prediction{pred("calc__calc-1", goldPatch), pred("calc__calc-3", regressionPatch)}
	evaluate := func(c *sandbox.Client, runID string) map[string]swebench.InstanceResult {
		cfg := f.config(t, runID, preds)
		cfg.Sandboxes = []*sandbox.Client{c}
		cfg.Mode, cfg.Namespace, cfg.Repos, cfg.Image = harness.ModePrebuilt, ns, nil, ""
		cfg.InstanceIDs = []string{"calc__calc-1", "calc__calc-3"}
		res, err := swebench.Evaluate(ctx, cfg)
		require.NoError(t, err)
		return byID(res)
	}
	onDocker := evaluate(f.client, "prebuilt-docker")
	require.Equal(t, swebench.StatusResolved, onDocker["calc__calc-1"].Status, onDocker["calc__calc-1"].Error)
	require.Equal(t, swebench.StatusUnresolved, onDocker["calc__calc-3"].Status, onDocker["calc__calc-3"].Error)
	runID := "prebuilt-" + testenv.Session(t)
	onKube := evaluate(kube, runID)
	for _, id := range []string{"calc__calc-1", "calc__calc-3"} {
		d, k := onDocker[id], onKube[id]
		assert.Equal(t, d.Status, k.Status, "%s: %s", id, k.Error)
		assert.Equal(t, d.Outcome, k.Outcome, id)
		assert.Equal(t, d.FailToPass, k.FailToPass, id)
		assert.Equal(t, d.PassToPass, k.PassToPass, id)
		b, err := os.ReadFile(filepath.Join(k.LogDir, "run_instance.log"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "(prebuilt mode,", "%s ran in prebuilt mode", id)
	}
	assert.Zero(t, kubePods(t, swebench.LabelRun+"="+runID), "the run left pods behind")

	// The eval command, prebuilt mode chosen by --namespace, on the cluster.
	dir := t.TempDir()
	writeJSON := func(name string, rows ...any) string {
		var b bytes.Buffer
		for _, r := range rows {
			line, err := json.Marshal(r)
			require.NoError(t, err)
			b.Write(append(line, '\n'))
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
		return p
	}
	dsPath := writeJSON("dataset.jsonl", f.project.Instance("calc__calc-1"), f.project.Instance("calc__calc-3"))
	predsPath := writeJSON("preds.jsonl", preds[0], preds[1])
	cliRun := "prebuilt-cli-" + testenv.Session(t)
	cmd := exec.Command(swebenchtest.BuildEvalKube(t), "--dataset_name", dsPath, "--predictions_path", predsPath, "--namespace", ns,
		"--kubeconfig", kubetest.Kubeconfig(t), "--kube_namespace", kubetest.Namespace, "--run_id", cliRun,
		"--log_dir", filepath.Join(dir, "logs"), "--report_dir", dir, "--max_workers", "2")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	rep := swebenchtest.RunReport(t, filepath.Join(dir, "org__model."+cliRun+".json"))
	assert.Equal(t, []string{"calc__calc-1"}, swebenchtest.IDs(rep, "resolved_ids"), "%s", out)
	assert.Equal(t, []string{"calc__calc-3"}, swebenchtest.IDs(rep, "unresolved_ids"), "%s", out)
	b, err := os.ReadFile(filepath.Join(dir, "logs", "run_evaluation", cliRun, "org__model", "calc__calc-1", "run_instance.log"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "(prebuilt mode,")
	assert.Zero(t, kubePods(t, swebench.LabelRun+"="+cliRun), "the command's run left pods behind")

	// Inside the pods: the sandbox the evaluation makes, and one as uid 1000.
	shell := func(c *sandbox.Client, s sandbox.Spec, script string) string {
		t.Helper()
		s.Policy = sandbox.AllowAll()
		sb, err := c.Create(ctx, s)
		require.NoError(t, err)
		defer func() { assert.NoError(t, sb.Remove(context.Background())) }()
		res, err := sb.Shell(ctx, script, sandbox.ExecRequest{})
		require.NoError(t, err)
		return res.Stdout.String() + res.Stderr.String()
	}
	prebuilt := swebench.SandboxSpec(refs[0])
	seeded := swebench.ReadOnlyRootSpec(refs[0])
	// The listing reads uid 1000's private directory too.
	lister := swebench.ReadOnlyRootSpec(refs[0])
	lister.Relax.CapAdd = []string{"CAP_DAC_READ_SEARCH"}
	want := shell(f.client, lister, manifest)
	require.Contains(t, want, "./owned/private drwx------ 1000:1000 \n", "the image holds the files the test checks")
	require.Contains(t, want, "./owned/private/key -rw------- 1000:1000 3 ")
	require.Contains(t, want, "./tools drwxrwsr-x 0:0")
	assert.Equal(t, want, shell(kube, lister, manifest), "/testbed in the pod has the image's files, modes and owners, as Docker's volume has")
	assert.Equal(t, "0\nx\n?? new-file\n", shell(kube, prebuilt, writeProbe), "the sandbox user (root in prebuilt mode) writes /testbed")
	assert.Equal(t, "0\nx\n?? new-file\n", shell(kube, seeded, writeProbe), "so does the sandbox of a read-only root")
	assert.Contains(t, shell(kube, seeded, rootProbe), "Read-only file system", "the read-only root stays read-only")
	assert.NotContains(t, shell(kube, seeded, rootProbe), "exit 0")
	assert.Contains(t, shell(kube, prebuilt, rootProbe+"; ls /usr/swebox-probe"), "exit 0\n/usr/swebox-probe\n", "the evaluation's root is writable")
	assert.Contains(t, shell(kube, prebuilt, "ls /usr/swebox-probe"), "No such file", "copy-on-write: another pod of the image does not see the write")

	// As uid 1000, the files are the image's, the user's own, and writable.
	user := sandbox.Spec{Image: refs[0], WorkingDir: "/testbed", Mounts: []sandbox.Mount{{Type: "volume", Target: "/testbed"}}}
	names := `id -u; ls -A /testbed; find /testbed -mindepth 1 ! -user 1000 | head -3`
	assert.Equal(t, "1000\n"+strings.Join(topLevel(want), "\n")+"\n", shell(kube, user, names), "uid 1000 gets the image's files, owned by itself")
	assert.Equal(t, "x\n", shell(kube, user, `echo x > /testbed/calc.py && cat calc.py`))
	assert.Contains(t, shell(f.client, user, names), "/testbed/calc.py\n", "Docker's volume keeps the image's owner (root)")

	// An image without /testbed: the volume is there, empty and writable.
	bare := swebench.ReadOnlyRootSpec(testenv.Image())
	assert.Equal(t, "empty\n0\nx\n", shell(kube, bare, `ls -A /testbed | grep -q . || echo empty; id -u; echo x > /testbed/f && cat /testbed/f`))

	// uid 1000 cannot read root's private file, so the copy fails: the pod
	// never starts and the error names the image and the directory.
	noRead := &tarBuf{buf: &bytes.Buffer{}}
	noRead.tw = tar.NewWriter(noRead.buf)
	require.NoError(t, noRead.tw.WriteHeader(&tar.Header{Name: "private", Typeflag: tar.TypeReg, Mode: 0o600, Size: 3}))
	_, err = noRead.tw.Write([]byte("ok\n"))
	require.NoError(t, err)
	addToTar(t, noRead, "Dockerfile", "FROM "+refs[0]+"\nCOPY private /testbed/private\n")
	unreadable := ns + "/unreadable:latest"
	_, err = f.client.BuildImage(ctx, sandbox.BuildRequest{Context: noRead.buf, Tags: []string{unreadable}, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.client.RemoveImage(context.Background(), unreadable)) })
	script("import", unreadable)
	t.Cleanup(func() { script("unimport", unreadable) })
	s := sandbox.Spec{Image: unreadable, Mounts: []sandbox.Mount{{Type: "volume", Target: "/testbed"}}}
	_, err = kube.Create(ctx, s)
	var pe *kubebackend.PodError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Detail, "copying /testbed of image "+unreadable+" into its volume failed")
	assert.Contains(t, pe.Detail, "Permission denied", "the error carries what the copy said")
	assert.Zero(t, kubePods(t, sandbox.LabelSession+"="+kube.Session()), "no pod of the test is left")
}

// topLevel is the names of the top-level entries of a manifest.
func topLevel(manifest string) []string {
	var out []string
	for _, line := range strings.Split(manifest, "\n") {
		name, _, _ := strings.Cut(line, " ")
		if rest, ok := strings.CutPrefix(name, "./"); ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	return out
}

// kubePods counts the pods in the test namespace that match selector.
func kubePods(t testing.TB, selector string) int {
	t.Helper()
	pods, err := kubetest.Clientset(t).CoreV1().Pods(kubetest.Namespace).List(context.Background(),
		metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	return len(pods.Items)
}
