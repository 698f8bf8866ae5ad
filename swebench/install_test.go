package swebench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// CCImage is the test image with a C compiler and Python's headers
// (.ci/run builds it: SWEBOX_IMAGE_EXTRA=gcc,libc6-dev,python3-dev
// scripts/build-image.sh swebox/python-cc:bookworm).
const ccImage = "swebox/python-cc:bookworm"

// The stand-in repository: a package whose functions are a compiled
// extension, installed editable when its image is built. mul is wrong at
// base_commit; the gold patch fixes it in the C source, so only a rebuild
// makes test_mul pass.
var (
	extFiles = map[string]string{
		"setup.py": `from setuptools import Extension, setup

setup(
    name="fastcalc",
    version="1.0",
    packages=["fastcalc"],
    ext_modules=[Extension("fastcalc._speed", ["fastcalc/_speed.c"])],
)
`,
		"fastcalc/__init__.py": "from fastcalc._speed import add, mul\n",
		"fastcalc/_speed.c": `#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyObject *mul(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef methods[] = {
    {"add", add, METH_VARARGS, NULL},
    {"mul", mul, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
`,
		"tests/test_speed.py": "from fastcalc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
	}
	extGold = swebenchtest.ReplaceDiff("fastcalc/_speed.c", extFiles["fastcalc/_speed.c"],
		strings.Replace(extFiles["fastcalc/_speed.c"], "a + b);\n}\n\nstatic PyMethodDef", "a * b);\n}\n\nstatic PyMethodDef", 1))
	extTestPatch = swebenchtest.ReplaceDiff("tests/test_speed.py", extFiles["tests/test_speed.py"],
		extFiles["tests/test_speed.py"]+"\n\ndef test_mul():\n    assert mul(3, 4) == 12\n")
	// A pyproject.toml makes pip build in an isolated environment whose
	// setuptools it fetches from the index: upstream's container does,
	// a sandbox without network cannot.
	extNeedsIndex = extGold + swebenchtest.NewFileDiff("pyproject.toml",
		"[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n")
	// A fix in Python alone: mul computed over the extension's add.
	pyOnlyFix = swebenchtest.ReplaceDiff("fastcalc/__init__.py", extFiles["fastcalc/__init__.py"],
		"from fastcalc._speed import add\n\n\ndef mul(a, b):\n    return sum(add(0, a) for _ in range(b))\n")
)

// TestInstallStepRebuildsExtension: in prebuilt mode the eval script's
// install step ("python -m pip install -e .", run again as the official
// script runs it) rebuilds a compiled extension that the model patch
// changed, as in upstream's writable container, and the tests see the new
// build: the gold patch is resolved, a wrong one unresolved. When the step
// would need the network (a build requirement from the index) the instance
// is an error naming the step and the network, not graded on the stale
// build.
func TestInstallStepRebuildsExtension(t *testing.T) {
	c := testenv.Client(t)
	ctx := context.Background()
	if ok, err := c.HasImage(ctx, ccImage); err != nil || !ok {
		require.NoError(t, err)
		cienv.Skip(t, "%s is missing; build it with SWEBOX_IMAGE_EXTRA=gcc,libc6-dev,python3-dev scripts/build-image.sh %s", ccImage, ccImage)
	}
	src := filepath.Join(t.TempDir(), "fastcalc")
	base := swebenchtest.CommitFiles(t, src, extFiles)
	ns := "swebox-test-" + strings.ToLower(c.Session()[len(c.Session())-6:])
	ids := []string{"fastcalc__fastcalc-1", "fastcalc__fastcalc-2", "fastcalc__fastcalc-3", "fastcalc__fastcalc-4"}
	var refs []string
	for _, id := range ids {
		refs = append(refs, harness.InstanceImage(id, ns, "latest"))
	}
	// As an official image: the repository at /testbed, installed editable
	// into an environment pip may write to (a conda environment there;
	// Debian's interpreter with its EXTERNALLY-MANAGED marker removed here).
	dockerfile := "FROM " + ccImage + `
COPY testbed /testbed
WORKDIR /testbed
RUN rm -f /usr/lib/python3*/EXTERNALLY-MANAGED && ln -s /usr/bin/python3 /usr/local/bin/python && python -m pip install -e . && python -c "import fastcalc; assert fastcalc.mul(3, 4) == 7"
`
	swebenchtest.BuildImage(t, c, src, "testbed", dockerfile, refs[:3]...)
	// The fourth image's checkout asks for an isolated build (a
	// pyproject.toml the image's own install did not need), so the install
	// step fails without the network whatever the patch.
	swebenchtest.BuildImage(t, c, src, "testbed", dockerfile+`RUN printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' > pyproject.toml
`, refs[3])

	overrides := filepath.Join(t.TempDir(), "overrides.json")
	require.NoError(t, os.WriteFile(overrides, []byte(`{"swebox-test/fastcalc": {"test_cmd": "pytest -rA", "install": "python -m pip install -e ."}}`), 0o644))
	var ds []dataset.Instance
	for _, id := range ids {
		ds = append(ds, dataset.Instance{
			Repo: "swebox-test/fastcalc", InstanceID: id, BaseCommit: base, Version: "1.0",
			Patch: extGold, TestPatch: extTestPatch,
			FailToPass: []string{"tests/test_speed.py::test_mul"}, PassToPass: []string{"tests/test_speed.py::test_add"},
		})
	}
	wrong := swebenchtest.ReplaceDiff("fastcalc/_speed.c", extFiles["fastcalc/_speed.c"],
		strings.Replace(extFiles["fastcalc/_speed.c"], "a + b);\n}\n\nstatic PyMethodDef", "a - b);\n}\n\nstatic PyMethodDef", 1))
	preds := []dataset.Prediction{
		swebenchtest.Pred(ids[0], extGold),
		swebenchtest.Pred(ids[1], wrong),
		swebenchtest.Pred(ids[2], extNeedsIndex),
		swebenchtest.Pred(ids[3], pyOnlyFix),
	}
	cfg := swebench.Config{
		Dataset: ds, Predictions: preds, RunID: "install-step", Mode: harness.ModePrebuilt, Namespace: ns,
		SpecOverrides: overrides, Sandboxes: []*sandbox.Client{c},
		LogDir: filepath.Join(t.TempDir(), "logs"), ReportDir: t.TempDir(), WorkDir: t.TempDir(),
		Timeout: 3 * time.Minute, MaxWorkers: 2,
	}
	res, err := swebench.Evaluate(ctx, cfg)
	require.NoError(t, err)
	got := swebenchtest.ByID(res)

	r := got[ids[0]]
	assert.Equal(t, swebench.StatusResolved, r.Status, "the rebuilt extension passes: %s\n%s", r.Error, swebenchtest.ReadFile(t, cfg, ids[0], "test_output.txt"))
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[0], "run_instance.log"), `Install step "python -m pip install -e ." succeeded`)
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[0], "eval.sh"), "python -m pip install -e .\necho $? > /tmp/.swebox-install-status\n")

	r = got[ids[1]]
	assert.Equal(t, swebench.StatusUnresolved, r.Status, r.Error)
	assert.Equal(t, swebench.Fraction{Passed: 0, Total: 1}, r.FailToPass, "the wrong extension, rebuilt, fails test_mul")

	r = got[ids[2]]
	assert.Equal(t, swebench.StatusError, r.Status)
	assert.Equal(t, swebench.OutcomeInstallFailed, res.Outcomes[ids[2]])
	assert.ErrorIs(t, r.Err, swebench.ErrInstallFailed)
	assert.Contains(t, r.Error, "without network")
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[2], "run_instance.log"), "official harness runs it with network access", "the run report says why")
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[2], "test_output.txt"), "No matching distribution found for setuptools", "the step's own output")
	assert.NoFileExists(t, filepath.Join(swebenchtest.InstanceDir(cfg, ids[2]), "report.json"))
	assert.Contains(t, r.Error, "fastcalc/_speed.c", "the build input named")

	// The same failed step, with a patch to Python sources only, which the
	// image's editable install reads in place: graded, and the reports say
	// the step failed without the network.
	r = got[ids[3]]
	assert.Equal(t, swebench.StatusResolved, r.Status, "%s\n%s", r.Error, swebenchtest.ReadFile(t, cfg, ids[3], "test_output.txt"))
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[3], "test_output.txt"), "No matching distribution found for setuptools", "the step failed")
	assert.Contains(t, r.Warning, "without network")
	require.NotNil(t, r.Report)
	require.Len(t, r.Report.Notes.Environment, 1)
	assert.Contains(t, r.Report.Notes.Environment[0], "editable")
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[3], "report.json"), `"environment"`)
	assert.Contains(t, swebenchtest.ReadFile(t, cfg, ids[3], "run_instance.log"), "Install step: ")
	reports, err := filepath.Glob(filepath.Join(cfg.ReportDir, "*.install-step.json"))
	require.NoError(t, err)
	require.Len(t, reports, 1)
	runReport, err := os.ReadFile(reports[0])
	require.NoError(t, err)
	assert.Contains(t, string(runReport), `"swebox_environment"`)
	assert.Contains(t, string(runReport), ids[3])
}
