package repo_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/swebox/swebox/swebench/repo"
)

// makeRepo commits files into a new repository at dir with go-git and
// returns the commit id.
func makeRepo(dir string, files map[string]string) string {
	r, err := git.PlainInit(dir, false)
	if err != nil {
		log.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		log.Fatal(err)
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			log.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "Example", Email: "example@example.com", When: time.Unix(1700000000, 0).UTC()}
	h, err := wt.Commit("initial", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		log.Fatal(err)
	}
	return h.String()
}

func Example() {
	tmp, err := os.MkdirTemp("", "repo-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	// A local source holding acme/widget as owner/name.
	sources := filepath.Join(tmp, "sources")
	commit := makeRepo(filepath.Join(sources, "acme", "widget"), map[string]string{
		"README.md":       "# widget\n",
		"src/widget.py":   "def answer():\n    return 42\n",
		"tests/test_w.py": "from widget import answer\n",
	})

	cache, err := repo.New(
		repo.WithCacheDir(filepath.Join(tmp, "cache")),
		repo.WithLocalSources(sources),
		repo.WithRemote(""), // offline
	)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cache.Checkout(context.Background(), repo.CheckoutRequest{
		Repo:   "acme/widget",
		Commit: commit,
		Dir:    filepath.Join(tmp, "testbed"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Source, res.Files, "files,", res.Bytes, "bytes")
	fmt.Println("objects borrowed from the source:", res.ObjectsDir == filepath.Join(sources, "acme", "widget", ".git", "objects"))
	data, err := os.ReadFile(filepath.Join(tmp, "testbed", "src", "widget.py"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))
	// Output:
	// local 3 files, 63 bytes
	// objects borrowed from the source: true
	// def answer():
	//     return 42
}
