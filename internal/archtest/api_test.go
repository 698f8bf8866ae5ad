package archtest

import (
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportedPackage type-checks a package of the module from the compiler's
// export data, as `go list -export` builds it.
func exportedPackage(t *testing.T, path string) *types.Package {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", path).CombinedOutput()
	require.NoError(t, err, string(out))
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, f, _ := strings.Cut(line, "=")
		files[p] = f
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(p string) (io.ReadCloser, error) {
		return os.Open(files[p])
	})
	pkg, err := imp.Import(path)
	require.NoError(t, err)
	return pkg
}

// foreignTypes returns the named types of other modules that the exported
// API of pkg mentions: in exported functions, methods, fields, variables and
// constants, however deeply nested.
func foreignTypes(pkg *types.Package) map[string]string {
	found := map[string]string{}
	seen := map[types.Type]bool{}
	var walk func(where string, t types.Type)
	walk = func(where string, t types.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			obj := t.Obj()
			if obj.Pkg() != nil && obj.Pkg() != pkg {
				if p := obj.Pkg().Path(); !isStd(p) && !strings.HasPrefix(p, module+"/") {
					found[p+"."+obj.Name()] = where
				}
				return
			}
			for i := range t.NumMethods() {
				if m := t.Method(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
			walk(where, t.Underlying())
		case *types.Alias:
			walk(where, types.Unalias(t))
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Signature:
			for i := range t.Params().Len() {
				walk(where, t.Params().At(i).Type())
			}
			for i := range t.Results().Len() {
				walk(where, t.Results().At(i).Type())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() || f.Embedded() {
					walk(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := range t.NumMethods() {
				if m := t.Method(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
		}
	}
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if obj.Exported() {
			walk(name, obj.Type())
		}
	}
	return found
}

// TestSandboxAPIHasNoEngineTypes: the sandbox package's exported API speaks
// its own types only, so that no engine's wire types (Docker's, Kubernetes')
// reach its users and a second backend fits behind the same API.
func TestSandboxAPIHasNoEngineTypes(t *testing.T) {
	pkg := exportedPackage(t, module+"/sandbox")
	assert.Empty(t, foreignTypes(pkg), "foreign type -> where the exported API mentions it")
	// The check can fail: the Docker client's API is made of such types.
	docker := exportedPackage(t, "github.com/docker/docker/client")
	assert.Contains(t, foreignTypes(docker), "github.com/docker/docker/api/types/container.ExecOptions")
}
