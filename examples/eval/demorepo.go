package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The demo project's history is described by plain files (see
// demo/README.md): demo/repo/history.json lists the commits, and each
// commit's directory under demo/repo/ holds the files it adds or replaces on
// top of the previous commit. buildDemoRepo turns them into a bare git
// repository with fixed authors and dates, so the commit ids never change and
// can be written in demo/dataset.jsonl.

// demoHistory is demo/repo/history.json.
type demoHistory struct {
	Repo   string `json:"repo"`
	Author struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"author"`
	Commits []demoCommit `json:"commits"`
}

type demoCommit struct {
	Tree    string `json:"tree"`
	Date    string `json:"date"`
	Message string `json:"message"`
}

// demoRepo is a built demo repository.
type demoRepo struct {
	// Repo is "owner/name".
	Repo string
	// Sources is the directory to pass to repo.WithLocalSources: it holds
	// owner__name.git.
	Sources string
	// Commits maps each commit's tree directory name to its commit id.
	Commits map[string]string
	// Head is the last commit.
	Head string
}

// Names skipped when reading a tree directory: caches that running the demo
// project's tests in place would leave behind.
var demoIgnored = map[string]bool{"__pycache__": true, ".pytest_cache": true}

func readDemoHistory(fsys fs.FS) (demoHistory, error) {
	var h demoHistory
	b, err := fs.ReadFile(fsys, "repo/history.json")
	if err != nil {
		return h, fmt.Errorf("read demo history: %w", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("decode demo history: %w", err)
	}
	if !strings.Contains(h.Repo, "/") || len(h.Commits) == 0 {
		return h, errors.New("decode demo history: want a repo owner/name and at least one commit")
	}
	return h, nil
}

// buildDemoRepo writes the demo repository described by fsys (the demo
// directory) as a bare repository <dst>/<owner>__<name>.git and returns its
// commit ids. dst must not already hold the repository.
func buildDemoRepo(fsys fs.FS, dst string) (demoRepo, error) {
	h, err := readDemoHistory(fsys)
	if err != nil {
		return demoRepo{}, err
	}
	out := demoRepo{
		Repo:    h.Repo,
		Sources: dst,
		Commits: make(map[string]string, len(h.Commits)),
	}
	gitDir := filepath.Join(dst, strings.Replace(h.Repo, "/", "__", 1)+".git")
	r, err := git.PlainInit(gitDir, true)
	if err != nil {
		return demoRepo{}, fmt.Errorf("create demo repository: %w", err)
	}
	st := r.Storer

	files := map[string][]byte{} // the tree so far, by slash path
	var parent plumbing.Hash
	for _, c := range h.Commits {
		if err := overlayDemoTree(fsys, path.Join("repo", c.Tree), files); err != nil {
			return demoRepo{}, err
		}
		treeHash, err := writeDemoTree(st, files)
		if err != nil {
			return demoRepo{}, err
		}
		when, err := time.Parse(time.RFC3339, c.Date)
		if err != nil {
			return demoRepo{}, fmt.Errorf("demo commit %s: parse date: %w", c.Tree, err)
		}
		sig := object.Signature{Name: h.Author.Name, Email: h.Author.Email, When: when.UTC()}
		commit := &object.Commit{
			Author:    sig,
			Committer: sig,
			Message:   strings.TrimRight(c.Message, "\n") + "\n",
			TreeHash:  treeHash,
		}
		if !parent.IsZero() {
			commit.ParentHashes = []plumbing.Hash{parent}
		}
		id, err := storeObject(st, commit)
		if err != nil {
			return demoRepo{}, fmt.Errorf("demo commit %s: %w", c.Tree, err)
		}
		out.Commits[c.Tree] = id.String()
		parent = id
	}
	out.Head = parent.String()

	main := plumbing.NewBranchReferenceName("main")
	if err := st.SetReference(plumbing.NewHashReference(main, parent)); err != nil {
		return demoRepo{}, fmt.Errorf("set demo branch: %w", err)
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, main)); err != nil {
		return demoRepo{}, fmt.Errorf("set demo HEAD: %w", err)
	}
	return out, nil
}

// overlayDemoTree adds or replaces the files under dir in files.
func overlayDemoTree(fsys fs.FS, dir string, files map[string][]byte) error {
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if demoIgnored[d.Name()] || strings.HasSuffix(d.Name(), ".pyc") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, dir+"/")] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("read demo tree %s: %w", dir, err)
	}
	return nil
}

// encoder is what go-git objects that can be stored have in common.
type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func storeObject(st storer.EncodedObjectStorer, o encoder) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode object: %w", err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store object: %w", err)
	}
	return h, nil
}

func storeBlob(st storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store blob: %w", err)
	}
	return st.SetEncodedObject(obj)
}

// writeDemoTree stores files (every one a regular, non-executable file) as
// nested trees and returns the root tree's id.
func writeDemoTree(st storer.EncodedObjectStorer, files map[string][]byte) (plumbing.Hash, error) {
	type dir struct {
		files map[string][]byte
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string][]byte{}, dirs: map[string]*dir{}} }
	root := newDir()
	for p, data := range files {
		d := root
		parts := strings.Split(p, "/")
		for _, name := range parts[:len(parts)-1] {
			if d.dirs[name] == nil {
				d.dirs[name] = newDir()
			}
			d = d.dirs[name]
		}
		d.files[parts[len(parts)-1]] = data
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		var entries []object.TreeEntry
		for name, data := range d.files {
			h, err := storeBlob(st, data)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		}
		for name, sub := range d.dirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// Git orders entries by name, a directory sorting as if its name
		// ended in "/".
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
		return storeObject(st, &object.Tree{Entries: entries})
	}
	return write(root)
}
