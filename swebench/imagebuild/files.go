package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Files reads a repository's files at a commit. The official harness
// downloads requirements files and environment.yml files from
// https://raw.githubusercontent.com/<repo>/<commit>/<path> while it writes
// setup_env.sh; a Files is where this package reads them instead.
type Files interface {
	// ReadFile returns the file at path (slash-separated, relative to the
	// repository root) of repo ("owner/name") at commit, or an error
	// wrapping fs.ErrNotExist when there is no such file (where upstream
	// sees a status other than 200).
	ReadFile(ctx context.Context, repo, commit, path string) ([]byte, error)
}

// RawURL is where the official harness downloads from
// (SWE_BENCH_URL_RAW).
const RawURL = "https://raw.githubusercontent.com/"

// ErrDownload: a file upstream downloads (a requirements file, an
// environment.yml) could not be downloaded: the network or the server
// failed, as opposed to answering that there is no such file. LocalRepos
// reads the same files offline.
var ErrDownload = errors.New("download failed")

// DownloadError is a download that failed; it matches ErrDownload.
type DownloadError struct {
	URL string
	Err error
}

func (e *DownloadError) Error() string { return fmt.Sprintf("download %s: %v", e.URL, e.Err) }

func (e *DownloadError) Unwrap() []error { return []error{ErrDownload, e.Err} }

// rawHeaders are the headers upstream sends.
const rawUserAgent = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36"

// maxFileSize caps a downloaded or read file.
const maxFileSize = 16 << 20

// GitHub reads files over HTTP from base (RawURL when ""), as the official
// harness does: a response other than 200 means the file does not exist.
// A nil client is http.DefaultClient.
func GitHub(client *http.Client, base string) Files {
	if client == nil {
		client = http.DefaultClient
	}
	if base == "" {
		base = RawURL
	}
	return rawFiles{client: client, base: strings.TrimSuffix(base, "/") + "/"}
}

type rawFiles struct {
	client *http.Client
	base   string
}

func (r rawFiles) ReadFile(ctx context.Context, repo, commit, p string) ([]byte, error) {
	url := r.base + repo + "/" + commit + "/" + p
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	req.Header.Set("User-Agent", rawUserAgent)
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, &DownloadError{URL: url, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: status %d: %w", url, resp.StatusCode, fs.ErrNotExist)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFileSize+1))
	if err != nil {
		return nil, &DownloadError{URL: url, Err: err}
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("download %s: larger than %d bytes", url, maxFileSize)
	}
	return data, nil
}

// LocalRepos reads files from local git repositories (bare or not) found
// in dirs as owner/name, owner/name.git, owner__name or owner__name.git,
// the layout of the eval command's --repos. A repository found in none of
// them, or a commit or file it lacks, is fs.ErrNotExist.
func LocalRepos(dirs ...string) Files { return localRepos(dirs) }

type localRepos []string

func (l localRepos) ReadFile(ctx context.Context, repo, commit, p string) ([]byte, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.ContainsAny(name, `/\`) || owner == ".." || name == ".." {
		return nil, fmt.Errorf("read %s: bad repository name: %w", repo, fs.ErrNotExist)
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
		return nil, fmt.Errorf("read %s %s: path leaves the repository: %w", repo, p, fs.ErrNotExist)
	}
	for _, d := range l {
		for _, cand := range []string{
			filepath.Join(d, owner, name), filepath.Join(d, owner, name+".git"),
			filepath.Join(d, owner+"__"+name), filepath.Join(d, owner+"__"+name+".git"),
		} {
			if _, err := os.Stat(cand); err != nil {
				continue
			}
			return readGitFile(cand, commit, clean)
		}
	}
	return nil, fmt.Errorf("read %s: no local repository in %s: %w", repo, strings.Join(l, ", "), fs.ErrNotExist)
}

func readGitFile(dir, commit, p string) ([]byte, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	h, err := r.ResolveRevision(plumbing.Revision(commit))
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w: %w", dir, commit, err, fs.ErrNotExist)
	}
	c, err := r.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w: %w", dir, commit, err, fs.ErrNotExist)
	}
	f, err := c.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, fmt.Errorf("read %s at %s: %s: %w", dir, commit, p, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %s: %w", dir, commit, p, err)
	}
	if f.Size > maxFileSize {
		return nil, fmt.Errorf("read %s at %s: %s: larger than %d bytes", dir, commit, p, maxFileSize)
	}
	s, err := f.Contents()
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %s: %w", dir, commit, p, err)
	}
	return []byte(s), nil
}

// FilesFunc adapts a function to Files.
type FilesFunc func(ctx context.Context, repo, commit, path string) ([]byte, error)

// ReadFile calls f.
func (f FilesFunc) ReadFile(ctx context.Context, repo, commit, path string) ([]byte, error) {
	return f(ctx, repo, commit, path)
}

// FirstOf reads from each Files in turn and returns the first file found:
// a local repository before the network, for instance.
func FirstOf(files ...Files) Files {
	return FilesFunc(func(ctx context.Context, repo, commit, p string) ([]byte, error) {
		var errs []error
		for _, f := range files {
			data, err := f.ReadFile(ctx, repo, commit, p)
			if err == nil {
				return data, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(append(errs, fs.ErrNotExist)...)
	})
}
