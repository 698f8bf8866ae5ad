package agentbin_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox/internal/agentbin"
)

// goVersionOrSkip skips when the toolchain differs from the one that built
// the committed binaries: another compiler makes other bytes.
func goVersionOrSkip(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to rebuild the agent with")
	}
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	require.NoError(t, err)
	if have, want := strings.TrimSpace(string(out)), strings.TrimSpace(agentbin.GoVersion); have != want {
		t.Skipf("the committed agent binaries were built by %s, this toolchain is %s; run go generate ./sandbox/internal/agentbin with %s to compare", want, have, want)
	}
}

// TestEmbeddedBinariesMatchTheSource rebuilds the agent with the generator
// and checks that the committed binaries are the same bytes, so they cannot
// drift from the source.
func TestEmbeddedBinariesMatchTheSource(t *testing.T) {
	goVersionOrSkip(t)
	out := t.TempDir()
	gen := exec.Command("go", "run", "gen.go", "-out", out)
	b, err := gen.CombinedOutput()
	require.NoError(t, err, "%s", b)
	for _, arch := range []string{"amd64", "arm64"} {
		rebuilt, err := os.ReadFile(filepath.Join(out, "swebox-agent-linux-"+arch))
		require.NoError(t, err)
		embedded, err := agentbin.Binary(arch)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(rebuilt, embedded),
			"the embedded %s agent differs from the source: run go generate ./sandbox/internal/agentbin and commit the result", arch)
	}
}

// TestBinariesAreStaticAndSmall: no dynamic loader, so the agent runs in any
// Linux image, and a few MB each.
func TestBinariesAreStaticAndSmall(t *testing.T) {
	for _, tc := range []struct {
		arch    string
		machine elf.Machine
	}{{"amd64", elf.EM_X86_64}, {"arm64", elf.EM_AARCH64}, {"x86_64", elf.EM_X86_64}, {"aarch64", elf.EM_AARCH64}} {
		t.Run(tc.arch, func(t *testing.T) {
			bin, err := agentbin.Binary(tc.arch)
			require.NoError(t, err)
			assert.Less(t, len(bin), 4<<20)
			f, err := elf.NewFile(bytes.NewReader(bin))
			require.NoError(t, err)
			assert.Equal(t, tc.machine, f.Machine)
			for _, p := range f.Progs {
				assert.NotEqual(t, elf.PT_INTERP, p.Type, "statically linked")
			}
			assert.Nil(t, f.Section(".symtab"), "stripped")
		})
	}
	_, err := agentbin.Binary("s390x")
	require.ErrorIs(t, err, agentbin.ErrNoBinary)
}

// TestInstall writes the binary once, by content hash, executable by all,
// and repairs a damaged copy.
func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	path, err := agentbin.Install(dir, runtime.GOARCH)
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		require.ErrorIs(t, err, agentbin.ErrNoBinary)
		return
	}
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	want, _ := agentbin.Binary(runtime.GOARCH)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	again, err := agentbin.Install(dir, runtime.GOARCH)
	require.NoError(t, err)
	assert.Equal(t, path, again)

	require.NoError(t, os.WriteFile(path, []byte("damaged"), 0o755))
	_, err = agentbin.Install(dir, runtime.GOARCH)
	require.NoError(t, err)
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got, "a damaged copy is replaced")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files are left")

	if runtime.GOOS == "linux" {
		out, err := exec.Command(path).CombinedOutput()
		assert.Error(t, err)
		assert.Contains(t, string(out), "usage: swebox-agent serve SOCKET", "the installed binary runs here")
	}
}

// TestVendoredImporterKeepsTheBinaries vendors the module into a scratch
// program that imports sandbox, and compiles the embedding package for
// Linux and macOS from the vendor directory alone: go:embed fails to
// compile when the binaries were not vendored. (Compiling that package is
// what can fail; the whole program would add a cold compile of every
// vendored dependency per platform, minutes on two cores.) The program's
// package graph must resolve from the vendor directory too.
func TestVendoredImporterKeepsTheBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("vendors and builds a program: slow")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/importer\n\ngo 1.26\n\n"+
		"require github.com/swebox/swebox v0.0.0\n\nreplace github.com/swebox/swebox => "+root+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(`package main

import (
	"fmt"

	"github.com/swebox/swebox/sandbox"
)

func main() {
	_, err := sandbox.New()
	fmt.Println(err)
}
`), 0o644))
	goCmd := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// The module cache has every dependency and go.sum their sums:
		// nothing is downloaded.
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off"}, env...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v: %s", args, out)
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))
	goCmd(nil, "mod", "tidy", "-e")
	goCmd(nil, "mod", "vendor")
	vendored := filepath.Join(dir, "vendor", "github.com", "swebox", "swebox", "sandbox", "internal", "agentbin")
	for _, arch := range []string{"amd64", "arm64"} {
		got, err := os.ReadFile(filepath.Join(vendored, "swebox-agent-linux-"+arch))
		require.NoError(t, err, "the %s agent is vendored", arch)
		want, _ := agentbin.Binary(arch)
		assert.True(t, bytes.Equal(want, got))
	}
	for _, goos := range []string{"linux", "darwin"} {
		env := []string{"GOOS=" + goos, "CGO_ENABLED=0"}
		goCmd(env, "list", "-mod=vendor", "-deps", ".")
		goCmd(env, "build", "-mod=vendor", "github.com/swebox/swebox/sandbox/internal/agentbin")
	}
	// The check has teeth: without the binaries the package does not compile.
	for _, arch := range []string{"amd64", "arm64"} {
		require.NoError(t, os.Remove(filepath.Join(vendored, "swebox-agent-linux-"+arch)))
	}
	cmd := exec.Command("go", "build", "-mod=vendor", "github.com/swebox/swebox/sandbox/internal/agentbin")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "swebox-agent-linux-")
}
