package imagebuild_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/imagebuild"
)

// gitRepo makes owner__name under dir with one commit holding files and
// returns the commit id.
func gitRepo(t *testing.T, dir, repo string, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	wd := filepath.Join(dir, strings.ReplaceAll(repo, "/", "__"))
	for name, text := range files {
		p := filepath.Join(wd, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-q", "-m", "x")
	return run("rev-parse", "HEAD")
}

// A dry run reads the requirements file from a local repository, as it
// would download it, and gets the same setup_env.sh.
func TestLocalReposGiveTheDownloadedFile(t *testing.T) {
	dir := t.TempDir()
	reqs := "-e .\nnumpy\n-r extra.txt\n"
	extra := "six\n"
	commit := gitRepo(t, dir, "django/django", map[string]string{
		"tests/requirements/py3.txt":   reqs,
		"tests/requirements/extra.txt": extra,
	})
	inst := dataset.Instance{Repo: "django/django", InstanceID: "django__django-01", Version: "3.0",
		BaseCommit: commit, EnvironmentSetupCommit: commit}

	local, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos(dir)))
	if err != nil {
		t.Fatal(err)
	}
	fromLocal, err := local.For(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}

	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.Header.Get("User-Agent") == "" || !strings.HasPrefix(r.Header.Get("User-Agent"), "Mozilla/5.0") {
			t.Errorf("User-Agent %q", r.Header.Get("User-Agent"))
		}
		switch r.URL.Path {
		case "/django/django/" + commit + "/tests/requirements/py3.txt":
			_, _ = w.Write([]byte(reqs))
		case "/django/django/" + commit + "/tests/requirements/extra.txt":
			_, _ = w.Write([]byte(extra))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	remote, err := imagebuild.New(imagebuild.WithFiles(imagebuild.GitHub(srv.Client(), srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	fromRemote, err := remote.For(context.Background(), inst)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Errorf("downloads %v, want the file and its include", paths)
	}
	if fromLocal.Env.Script != fromRemote.Env.Script || fromLocal.Env.Name != fromRemote.Env.Name {
		t.Errorf("local and downloaded differ:\n%s\n---\n%s", fromLocal.Env.Script, fromRemote.Env.Script)
	}
	if !strings.Contains(fromLocal.Env.Script, "six\n\nnumpy\n") {
		t.Errorf("setup_env.sh lacks the requirements, include first:\n%s", fromLocal.Env.Script)
	}

	// A commit the repository lacks is a missing file, and For names it.
	inst.EnvironmentSetupCommit = strings.Repeat("0", 40)
	_, err = local.For(context.Background(), inst)
	var dfe *imagebuild.DependencyFileError
	if !errors.As(err, &dfe) || !errors.Is(err, imagebuild.ErrNoDependencyFile) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want a DependencyFileError", err)
	}
	if dfe.Repo != "django/django" || dfe.Commit != inst.EnvironmentSetupCommit {
		t.Errorf("error names %s at %s", dfe.Repo, dfe.Commit)
	}
}

func TestLocalReposStayInTheRepository(t *testing.T) {
	dir := t.TempDir()
	commit := gitRepo(t, dir, "o/r", map[string]string{"a.txt": "a"})
	f := imagebuild.LocalRepos(dir)
	for _, p := range []string{"../x", "/etc/passwd", "a/../../b"} {
		if _, err := f.ReadFile(context.Background(), "o/r", commit, p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: err = %v, want ErrNotExist", p, err)
		}
	}
	if data, err := f.ReadFile(context.Background(), "o/r", commit, "a.txt"); err != nil || string(data) != "a" {
		t.Errorf("a.txt = %q, %v", data, err)
	}
}

func TestUnknownRepoAndVersion(t *testing.T) {
	p, err := imagebuild.New(imagebuild.WithFiles(imagebuild.LocalRepos()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.For(context.Background(), dataset.Instance{Repo: "me/mine", Version: "1", InstanceID: "me__mine-1", BaseCommit: "abc"})
	if !errors.Is(err, imagebuild.ErrUnknownRepo) {
		t.Errorf("err = %v, want ErrUnknownRepo", err)
	}
	_, err = p.For(context.Background(), dataset.Instance{Repo: "django/django", Version: "0.0", InstanceID: "django__django-1", BaseCommit: "abc"})
	if !errors.Is(err, imagebuild.ErrUnknownVersion) {
		t.Errorf("err = %v, want ErrUnknownVersion", err)
	}
}

// Under ArchARM64 names and platform say arm64 and conda is aarch64's.
func TestArchARM64(t *testing.T) {
	p, err := imagebuild.New(imagebuild.WithArch(imagebuild.ArchARM64), imagebuild.WithFiles(imagebuild.LocalRepos()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.For(context.Background(), dataset.Instance{Repo: "psf/requests", Version: "2.4", InstanceID: "psf__requests-2317", BaseCommit: "091991be0da19de9108dbe5e3752917fea3d7fdc"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Platform != "linux/arm64/v8" || !strings.HasPrefix(s.Base.Name, "sweb.base.py.arm64") ||
		!strings.Contains(s.Base.Dockerfile, "Linux-aarch64.sh") || s.Instance.Name != "sweb.eval.arm64.psf__requests-2317:latest" {
		t.Errorf("arm64 spec: %s %s %s", s.Platform, s.Base.Name, s.Instance.Name)
	}
	if s.Instance.Dir != "logs/build_images/instances/sweb.eval.arm64.psf__requests-2317__latest" {
		t.Errorf("dir %s", s.Instance.Dir)
	}
}

// A server that answers "no such file" is fs.ErrNotExist (upstream's
// status other than 200); one that cannot be reached is ErrDownload, a
// *DownloadError naming the URL, which LocalRepos would have avoided.
func TestGitHubDownloadFailure(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	files := imagebuild.GitHub(srv.Client(), srv.URL)
	_, err := files.ReadFile(context.Background(), "o/r", "c", "requirements.txt")
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, imagebuild.ErrDownload) {
		t.Errorf("404: %v, want fs.ErrNotExist and not ErrDownload", err)
	}
	srv.Close()
	_, err = files.ReadFile(context.Background(), "o/r", "c", "requirements.txt")
	var de *imagebuild.DownloadError
	if !errors.As(err, &de) || !errors.Is(err, imagebuild.ErrDownload) || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("closed server: %v, want a *DownloadError", err)
	}
	if want := srv.URL + "/o/r/c/requirements.txt"; de.URL != want {
		t.Errorf("URL %q, want %q", de.URL, want)
	}
}
