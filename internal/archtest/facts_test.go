package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/harness"
)

// TestHarnessIsALeaf: the harness vocabulary imports the standard library
// only, and the packages that speak it import it.
func TestHarnessIsALeaf(t *testing.T) {
	for pkg, deps := range goList(t, "swebench/harness", true) {
		for _, d := range deps {
			assert.True(t, isStd(d), "%s depends on %s", pkg, d)
		}
	}
	imports := goList(t, "swebench/...", false)
	for _, pkg := range []string{"swebench", "swebench/spec", "swebench/logparse", "swebench/grade"} {
		assert.Contains(t, imports[module+"/"+pkg], module+"/swebench/harness", "%s speaks the harness vocabulary", pkg)
	}
}

// TestHarnessFactsAreDefinedOnce: outside swebench/harness, no source file
// of swebench or the commands spells a harness fact itself: no string
// literal holding a marker, an image name part, a rule set or a parser
// name, and no declaration of a Rules or Mode type, a FAIL_ONLY table or a
// function computing one of the facts.
func TestHarnessFactsAreDefinedOnce(t *testing.T) {
	contains := []string{
		harness.StartTestOutput, harness.EndTestOutput, harness.ExitCodeMarker, harness.PatchApplyFailMarker,
		harness.ResetFailedMarker, harness.TestsErroredMarker, harness.TestsTimedOutMarker,
		harness.AppliedPatchMarker, harness.PatchAlreadyAppliedMarker,
		"sweb.eval.", "_1776_",
	}
	equals := map[string]bool{string(harness.V4): true, string(harness.V5): true, harness.RepoDir: true,
		string(harness.ModePrebuilt): true, string(harness.ModeWorkspace): true}
	for _, name := range parserNames(t) {
		equals[name] = true
	}
	declared := map[string]bool{"Rules": true, "Mode": true, "FailOnly": true, "failOnlyRepos": true,
		"OfficialImage": true, "InstanceImage": true, "ForRepo": true, "ForInstance": true, "repoParsers": true,
		"effectiveRules": true}

	// Literals that equal a fact's value but mean something else.
	allowed := map[string]bool{
		"spec/diff.go:" + strconv.Quote(harness.ParserDjango):         true, // DirectivesDjango, a directive style
		"strict/strict.go:" + strconv.Quote(harness.ParserPytest):     true, // the pytest command, which strict grading recognises
		"family/multiswe_repos.go:" + strconv.Quote(harness.ParserJq): true, // Multi-SWE-bench's jqlang/jq repository
	}
	var found []string
	for _, root := range []string{"../../swebench", "../../examples/eval"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "harness" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				// Tables generated from upstream's own (package names
				// such as "pytest" are not parser names there).
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					s, err := strconv.Unquote(n.Value)
					if err != nil {
						return true
					}
					hit := equals[s]
					for _, c := range contains {
						hit = hit || strings.Contains(s, c)
					}
					rel, _ := filepath.Rel("../../swebench", path)
					if hit && !allowed[rel+":"+n.Value] {
						found = append(found, fset.Position(n.Pos()).String()+": literal "+n.Value)
					}
				case *ast.TypeSpec:
					if declared[n.Name.Name] {
						found = append(found, fset.Position(n.Pos()).String()+": type "+n.Name.Name)
					}
				case *ast.FuncDecl:
					if n.Recv == nil && declared[n.Name.Name] {
						found = append(found, fset.Position(n.Pos()).String()+": func "+n.Name.Name)
					}
				case *ast.ValueSpec:
					for _, id := range n.Names {
						if declared[id.Name] {
							found = append(found, fset.Position(id.Pos()).String()+": "+id.Name)
						}
					}
				}
				return true
			})
			return nil
		})
		require.NoError(t, err)
	}
	assert.Empty(t, found, "harness facts spelled outside swebench/harness")
}

// parserNames lists the values of every Parser* constant of
// swebench/harness, read from its source, so that a parser added there is
// checked without being listed here.
func parserNames(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../../swebench/harness/*.go")
	require.NoError(t, err)
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Parser") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						names = append(names, v)
					}
				}
			}
		}
	}
	require.Contains(t, names, harness.ParserPytest, "the parser names are read from swebench/harness")
	require.Contains(t, names, harness.ParserPlotlyJS)
	return names
}
