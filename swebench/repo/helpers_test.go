package repo

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitEnv isolates the git CLI from the machine's configuration.
func gitEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z",
		"GIT_ALLOW_PROTOCOL=file",
		"LC_ALL=C",
	}
	return env
}

// runGit runs git in dir and returns its standard output.
func runGit(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(os.TempDir())
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// gitT is runGit failing the test on error.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(dir, nil, args...)
	require.NoError(t, err)
	return out
}

// gitInT is gitT with standard input.
func gitInT(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := runGit(dir, stdin, args...)
	require.NoError(t, err)
	return out
}

func writeT(t testing.TB, path string, data string, mode fs.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), mode))
	require.NoError(t, os.Chmod(path, mode))
}

func readT(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// fixture is a repository shaped like real ones, built with the git CLI.
type fixture struct {
	work    string   // non-bare repository
	commits []string // oldest first
	tag     string   // annotated tag on commits[1]
	outside string   // a directory outside every checkout
}

// newFixture builds a non-bare repository at dir with three commits:
// the first packed, the second in a second pack, the third loose; refs
// packed; an annotated tag. The trees hold executables, symlinks (one
// pointing outside, one absolute, one dangling), CRLF files under
// "* text=auto", unicode and space names, empty files, a submodule
// gitlink, a deep tree, a large file changed between commits (deltas) and
// a 3 MiB incompressible one.
func newFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	f := &fixture{work: dir, outside: t.TempDir()}
	gitT(t, "", "init", "-q", "-b", "main", dir)
	gitT(t, dir, "config", "core.autocrlf", "false")

	large := strings.Repeat("line of a large file that compresses and deltas well\n", 2000)
	// Commit 1: CRLF content committed before any .gitattributes, so the
	// blob itself holds CRLF.
	writeT(t, filepath.Join(dir, "README.md"), "# fixture\n", 0o644)
	writeT(t, filepath.Join(dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\n", 0o644)
	writeT(t, filepath.Join(dir, "mixed.txt"), "lf\ncrlf\r\ncr\rend", 0o644)
	writeT(t, filepath.Join(dir, "bin", "run.sh"), "#!/bin/sh\necho run\n", 0o755)
	writeT(t, filepath.Join(dir, "src", "pkg", "mod.py"), "def f():\n    return 1\n", 0o644)
	writeT(t, filepath.Join(dir, "src", "pkg", "__init__.py"), "", 0o644)
	writeT(t, filepath.Join(dir, "tests", "test_mod.py"), "from pkg.mod import f\n\ndef test_f():\n    assert f() == 1\n", 0o644)
	writeT(t, filepath.Join(dir, "large.txt"), large, 0o644)
	// Incompressible and over the reader's largest chunk (1 MiB).
	noise := make([]byte, 3<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	writeT(t, filepath.Join(dir, "noise.bin"), string(noise), 0o644)
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "one")
	f.commits = append(f.commits, strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD")))
	gitT(t, dir, "repack", "-a", "-d", "-q")

	// Commit 2: second pack.
	writeT(t, filepath.Join(dir, ".gitattributes"), "* text=auto\n", 0o644)
	writeT(t, filepath.Join(dir, "héllo wörld.txt"), "unicode\n", 0o644)
	writeT(t, filepath.Join(dir, "日本語", "ファイル.md"), "japanese\n", 0o644)
	writeT(t, filepath.Join(dir, "empty"), "", 0o644)
	writeT(t, filepath.Join(dir, "large.txt"), large+"one more line\n", 0o644)
	deep := filepath.Join(dir, "deep")
	for i := range 40 {
		deep = filepath.Join(deep, fmt.Sprintf("d%02d", i))
	}
	writeT(t, filepath.Join(deep, "leaf.txt"), "leaf\n", 0o644)
	require.NoError(t, os.Symlink("src/pkg/mod.py", filepath.Join(dir, "link-inside")))
	require.NoError(t, os.Symlink("../../../"+filepath.Base(f.outside), filepath.Join(dir, "link-outside")))
	require.NoError(t, os.Symlink("/etc", filepath.Join(dir, "link-abs")))
	require.NoError(t, os.Symlink("does/not/exist", filepath.Join(dir, "link-dangling")))
	writeT(t, filepath.Join(dir, ".gitmodules"), "[submodule \"sub\"]\n\tpath = vendor/sub\n\turl = https://example.com/sub.git\n", 0o644)
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+f.commits[0]+",vendor/sub")
	gitT(t, dir, "commit", "-q", "-m", "two")
	f.commits = append(f.commits, strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD")))
	gitT(t, dir, "tag", "-a", "-m", "release", "v1.0")
	f.tag = "v1.0"
	gitT(t, dir, "repack", "-d", "-q")

	// Commit 3: loose objects only.
	writeT(t, filepath.Join(dir, "src", "pkg", "mod.py"), "def f():\n    return 2\n", 0o644)
	writeT(t, filepath.Join(dir, "bin", "run.sh"), "#!/bin/sh\necho run fast\n", 0o755)
	writeT(t, filepath.Join(dir, "new.txt"), "new\n", 0o600)
	require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "three")
	f.commits = append(f.commits, strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD")))
	gitT(t, dir, "pack-refs", "--all")

	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	require.NoError(t, err)
	require.Len(t, packs, 2, "fixture should hold two packs")
	return f
}

// entryInfo is what a comparison of two checked-out trees looks at.
type entryInfo struct {
	Kind    string // file, dir, symlink
	Perm    fs.FileMode
	Content string // file bytes or symlink target
}

// snapshot lists every path under root except .git.
func snapshot(t testing.TB, root string) map[string]entryInfo {
	t.Helper()
	out := map[string]entryInfo{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			out[rel] = entryInfo{Kind: "symlink", Content: target}
		case fi.IsDir():
			out[rel] = entryInfo{Kind: "dir", Perm: fi.Mode().Perm()}
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = entryInfo{Kind: "file", Perm: fi.Mode().Perm(), Content: string(data)}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// archiveT extracts `git archive commit` from the git directory gitDir
// into a new directory, as a user would with tar -x (umask applied).
func archiveT(t testing.TB, gitDir, commit string) string {
	t.Helper()
	dst := t.TempDir()
	cmd := exec.Command("sh", "-c", `git --git-dir="$1" archive "$2" | tar -x --no-same-permissions --no-same-owner -C "$3"`, "sh", gitDir, commit, dst)
	cmd.Env = gitEnv(os.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return dst
}

// assertSameTree compares two snapshots path by path, reporting each
// difference briefly (contents can be large).
func assertSameTree(t testing.TB, want, got map[string]entryInfo) {
	t.Helper()
	short := func(e entryInfo) string {
		c := e.Content
		if len(c) > 60 {
			c = fmt.Sprintf("%.60q... (%d bytes)", c, len(c))
		} else {
			c = fmt.Sprintf("%q", c)
		}
		return fmt.Sprintf("%s %v %s", e.Kind, e.Perm, c)
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("missing %q (%s)", p, short(w))
			continue
		}
		if g != w {
			t.Errorf("%q differs:\n want %s\n got  %s", p, short(w), short(g))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("extra %q (%s)", p, short(g))
		}
	}
}

// dirState records every path under root with its mode, size and
// modification time, to tell whether anything was written there.
func dirState(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	require.NoError(t, err)
	return out
}
