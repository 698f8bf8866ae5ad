// Package archtest checks that imports point the way DESIGN.md says:
// pytestparse uses the standard library only; sandbox and pytestparse know
// nothing of SWE-bench; swebench reaches Docker only through sandbox; the
// harness vocabulary (swebench/harness) is a leaf that the SWE-bench
// packages import, and none of its facts is spelled anywhere else; agent and
// its parts know nothing of SWE-bench; only sandbox/kube links Kubernetes;
// the row types (swebench/dataset) and what needs only them link no Parquet
// reader.
package archtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/swebox/swebox"

// goList returns, per package matching pattern, the packages it imports
// (directly, or with deps also indirectly), tests excluded.
func goList(t *testing.T, pattern string, deps bool) map[string][]string {
	t.Helper()
	return goListTags(t, "", pattern, deps)
}

// goListTags is goList with build tags (comma-separated), as
// `go build -tags` takes them.
func goListTags(t *testing.T, tags, pattern string, deps bool) map[string][]string {
	t.Helper()
	format := `{{.ImportPath}}:{{join .Imports " "}}`
	if deps {
		format = `{{.ImportPath}}:{{join .Deps " "}}`
	}
	return list(t, "-tags", tags, "-f", format, module+"/"+pattern)
}

// list runs go list with args, whose format prints a package and the
// packages it names, and returns them by package.
func list(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	require.NoError(t, err, string(out))
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		m[pkg] = strings.Fields(imports)
	}
	require.NotEmpty(t, m)
	return m
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestPytestparseUsesOnlyTheStandardLibrary(t *testing.T) {
	for pkg, deps := range goList(t, "pytestparse/...", true) {
		for _, d := range deps {
			assert.True(t, isStd(d), "%s depends on %s", pkg, d)
		}
	}
}

func TestSandboxKnowsNothingOfSWEBench(t *testing.T) {
	for pkg, deps := range goList(t, "sandbox/...", true) {
		for _, d := range deps {
			assert.False(t, strings.HasPrefix(d, module+"/swebench") || strings.HasPrefix(d, module+"/pytestparse"), "%s depends on %s", pkg, d)
		}
	}
}

func TestSWEBenchReachesDockerOnlyThroughSandbox(t *testing.T) {
	for pkg, imports := range goList(t, "swebench/...", false) {
		for _, d := range imports {
			assert.False(t, strings.HasPrefix(d, "github.com/docker/"), "%s imports %s", pkg, d)
		}
	}
	for pkg, deps := range goList(t, "swebench/...", true) {
		if pkg == module+"/swebench" || pkg == module+"/swebench/task" || pkg == module+"/swebench/imagebuild" {
			continue // the evaluator and the task environments run sandboxes; imagebuild builds images through them
		}
		for _, d := range deps {
			assert.False(t, strings.HasPrefix(d, "github.com/docker/"), "%s depends on %s", pkg, d)
		}
	}
}

// goListTests is goList's deps for the packages matching pattern with their
// tests: the package as its tests compile it, its external test package and
// the test binary, each keyed by go list's name for it.
func goListTests(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	return list(t, "-test", "-f", `{{.ImportPath}}:{{join .Deps " "}}`, module+"/"+pattern)
}

// TestTestCodeRespectsTheLayering holds test code to the direction of the
// code it tests: the tests of sandbox, agent and pytestparse, and the engine
// fixture they share (internal/testenv), link nothing of SWE-bench, so a
// change to swebench never rebuilds or breaks them.
func TestTestCodeRespectsTheLayering(t *testing.T) {
	tests := 0
	for _, pattern := range []string{"sandbox/...", "agent/...", "pytestparse/...", "internal/testenv"} {
		for pkg, deps := range goListTests(t, pattern) {
			if strings.HasSuffix(pkg, ".test") || strings.Contains(pkg, "[") {
				tests++
			}
			for _, d := range deps {
				assert.False(t, strings.HasPrefix(d, module+"/swebench") || d == module+"/internal/swebenchtest", "%s depends on %s", pkg, d)
			}
		}
	}
	assert.Greater(t, tests, 5, "the patterns matched the packages' tests")
	// The rule has teeth: the SWE-bench fixture does link swebench.
	deps := goListTests(t, "internal/swebenchtest")[module+"/internal/swebenchtest"]
	assert.Contains(t, deps, module+"/swebench")
}

// The agent's parts: the core (agent) and the parts that build on it import
// the sandbox and pytestparse, never SWE-bench or Docker's wire types; the
// leaves (egress, traceback, secrets) import nothing of the module's.
func TestAgentPartsPointOneWay(t *testing.T) {
	leaves := map[string]bool{module + "/agent/egress": true, module + "/agent/traceback": true, module + "/agent/secrets": true}
	imports := goList(t, "agent/...", false)
	for leaf := range leaves {
		require.Contains(t, imports, leaf, "the part exists")
	}
	for pkg, deps := range goList(t, "agent/...", true) {
		for _, d := range deps {
			assert.False(t, strings.HasPrefix(d, module+"/swebench"), "%s depends on %s", pkg, d)
			assert.False(t, strings.HasPrefix(d, module+"/examples"), "%s depends on %s", pkg, d)
			if leaves[pkg] {
				assert.False(t, strings.HasPrefix(d, module+"/"), "%s is a leaf but depends on %s", pkg, d)
			}
		}
		for _, d := range imports[pkg] {
			assert.False(t, strings.HasPrefix(d, "github.com/docker/"), "%s imports %s", pkg, d)
			// Parts may import the core, the core no part but the leaves.
			if pkg == module+"/agent" && strings.HasPrefix(d, module+"/agent/") {
				assert.True(t, leaves[d], "the core imports the part %s, which builds on it", d)
			}
		}
	}
}

// TestOnlyTheKubernetesBackendLinksKubernetes: importing sandbox, swebench,
// agent or pytestparse (or any of their packages but sandbox/kube) links no
// k8s.io package, so that a program that offers no --kubeconfig compiles
// without client-go. Only sandbox/kube links it, and the commands (through
// internal/engineflags, and internal/kubetest for tests) only when built
// with -tags kube: the default build of every command links no client-go.
func TestOnlyTheKubernetesBackendLinksKubernetes(t *testing.T) {
	kube := module + "/sandbox/kube"
	checked := 0
	for _, pattern := range []string{"sandbox/...", "swebench/...", "agent/...", "pytestparse/...", "examples/...", "internal/engineflags"} {
		for pkg, deps := range goList(t, pattern, true) {
			if pkg == kube {
				continue
			}
			checked++
			for _, d := range deps {
				assert.False(t, strings.HasPrefix(d, "k8s.io/") || d == kube, "%s depends on %s", pkg, d)
			}
		}
	}
	assert.Greater(t, checked, 10, "the patterns matched the module's packages")
	// The rule has teeth: the backend itself does link client-go, and so
	// does each command built with the kube tag (internal/engineflags'
	// kube.go).
	deps := goList(t, "sandbox/kube", true)[kube]
	assert.Contains(t, deps, "k8s.io/client-go/kubernetes")
	for _, cmd := range []string{"examples/mcp", "examples/eval"} {
		built := goListTags(t, "kube", cmd, true)[module+"/"+cmd]
		assert.Contains(t, built, kube, cmd)
		assert.Contains(t, built, "k8s.io/client-go/kubernetes", cmd)
	}
}

// TestBackendSeamIsInternal: the contract a backend implements lives in an
// internal package, so no package outside the module can implement one.
func TestBackendSeamIsInternal(t *testing.T) {
	imports := goList(t, "sandbox/kube", false)[module+"/sandbox/kube"]
	assert.Contains(t, imports, module+"/sandbox/internal/seam")
}

// TestOnlyTheTaskRepoReaderLinksYAML: reading a task repository's
// sweb.yaml and task.yaml is the one job that needs a YAML parser, so no
// other library package links one (sandbox/kube's client-go brings its
// own, and is checked apart).
func TestOnlyTheTaskRepoReaderLinksYAML(t *testing.T) {
	reader := module + "/swebench/taskrepo"
	isYAML := func(d string) bool {
		return strings.HasPrefix(d, "go.yaml.in/yaml") || strings.HasPrefix(d, "gopkg.in/yaml") ||
			strings.HasPrefix(d, "sigs.k8s.io/yaml") || strings.HasPrefix(d, "github.com/goccy/go-yaml")
	}
	checked := 0
	for _, pattern := range []string{"sandbox/...", "swebench/...", "agent/...", "pytestparse/..."} {
		for pkg, deps := range goList(t, pattern, true) {
			if pkg == reader || pkg == module+"/sandbox/kube" {
				continue
			}
			checked++
			for _, d := range deps {
				assert.False(t, isYAML(d) || d == reader, "%s depends on %s", pkg, d)
			}
		}
	}
	assert.Greater(t, checked, 10, "the patterns matched the module's packages")
	// The rule has teeth: the reader does link one.
	assert.Contains(t, goList(t, "swebench/taskrepo", true)[reader], "go.yaml.in/yaml/v3")
}

// TestInternalHelpersBelowSandbox: the host-file helpers that sandbox
// itself uses (internal/hostfs, internal/fsutil) import nothing of the
// module's, so that every layer can use them.
func TestInternalHelpersBelowSandbox(t *testing.T) {
	for _, pkg := range []string{"internal/hostfs", "internal/fsutil"} {
		deps := goList(t, pkg, true)[module+"/"+pkg]
		require.NotEmpty(t, deps, "%s listed", pkg)
		for _, d := range deps {
			assert.False(t, strings.HasPrefix(d, module+"/"), "%s depends on %s", pkg, d)
		}
	}
	// The rule has teeth: sandbox uses hostfs.
	assert.Contains(t, goList(t, "sandbox", false)[module+"/sandbox"], module+"/internal/hostfs")
}

// TestRowTypesDoNotLinkParquet: the row types (package dataset) are apart
// from the Parquet reader (dataset/parquet, linked by dataset/hub and the
// commands), so packages that only need an Instance do not link parquet-go.
func TestRowTypesDoNotLinkParquet(t *testing.T) {
	reader := module + "/swebench/dataset/parquet"
	isParquet := func(d string) bool {
		return strings.HasPrefix(d, "github.com/parquet-go/") || d == reader
	}
	for _, pkg := range []string{"swebench/dataset", "swebench/spec", "swebench/grade", "swebench/family", "swebench/logparse"} {
		deps, ok := goList(t, pkg, true)[module+"/"+pkg]
		require.True(t, ok, "%s listed", pkg)
		require.NotEmpty(t, deps, "%s listed", pkg)
		for _, d := range deps {
			assert.False(t, isParquet(d), "%s depends on %s", pkg, d)
		}
	}
	// The rule has teeth: the reader links parquet-go, and the Hub client
	// links the reader.
	assert.Contains(t, goList(t, "swebench/dataset/parquet", false)[reader], "github.com/parquet-go/parquet-go")
	assert.Contains(t, goList(t, "swebench/dataset/hub", true)[module+"/swebench/dataset/hub"], reader)
}
