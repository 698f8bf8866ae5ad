package swebench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Which install commands read the sources in place, and which patched
// files only a new build brings to the tests.
func TestInstallStepPolicy(t *testing.T) {
	for cmd, editable := range map[string]bool{
		"python -m pip install -e .":                                         true,
		"python -m pip install -e .[test] --verbose":                         true,
		"pip install --editable=.":                                           true,
		"python -m pip install -v --no-use-pep517 --no-build-isolation -e .": true,
		"python setup.py develop":                                            true,
		"python -m pip install .":                                            false,
		"python setup.py install":                                            false,
		"pip install --develop-me .":                                         false,
	} {
		assert.Equal(t, editable, editableInstall(cmd), cmd)
	}

	diff := func(name string) string {
		return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n@@ -1 +1 @@\n-x\n+y\n"
	}
	assert.Empty(t, buildInputs(diff("pkg/mod.py"), diff("tests/test_mod.py")), "Python sources are read in place")
	assert.Equal(t, []string{"pkg/_speed.c"}, buildInputs(diff("pkg/mod.py")+diff("pkg/_speed.c")))
	assert.Equal(t, []string{"setup.py", "pyproject.toml"}, buildInputs(diff("setup.py"), diff("pyproject.toml")))
	assert.Equal(t, []string{"pkg/_x.pyx"}, buildInputs(diff("pkg/_x.pyx")), "a file named once")
	renamed := "diff --git a/pkg/a.py b/pkg/a.pyx\nsimilarity index 90%\nrename from pkg/a.py\nrename to pkg/a.pyx\n"
	assert.Equal(t, []string{"pkg/a.pyx"}, buildInputs(renamed), "a rename into a build input")
	quoted := "diff --git \"a/pkg/\\303\\251.py\" \"b/pkg/\\303\\251.py\"\n"
	assert.Len(t, buildInputs(quoted), 1, "a name that cannot be read counts as a build input")
}
