package repo

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// entryKind is what a tree entry becomes on disk.
type entryKind uint8

const (
	kindFile    entryKind = iota // regular file, 0644
	kindExec                     // regular file, 0755
	kindSymlink                  // symbolic link, target is the blob
	kindGitlink                  // submodule: an empty directory, like git archive
)

// indexMode is the mode git records for the kind in the index.
func (k entryKind) indexMode() filemode.FileMode {
	switch k {
	case kindExec:
		return filemode.Executable
	case kindSymlink:
		return filemode.Symlink
	case kindGitlink:
		return filemode.Submodule
	default:
		return filemode.Regular
	}
}

// treeEntry is one non-directory path of the tree being checked out.
type treeEntry struct {
	path string // slash separated, relative to the tree root
	hash plumbing.Hash
	kind entryKind
	loc  location
	stat fileStat // filled in once written
}

// flatTree is a commit's tree, flattened: directories in the order they
// must be created (parents first) and every other entry.
type flatTree struct {
	dirs    []string
	trees   []plumbing.Hash // every tree object, root first
	entries []treeEntry
}

// parseCommit returns the tree and the parents named by a commit
// object's content.
func parseCommit(data []byte) (tree plumbing.Hash, parents []plumbing.Hash, err error) {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl <= 0 {
			break // end of headers
		}
		line := data[:nl]
		data = data[nl+1:]
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			tree, err = parseHash(val)
		case "parent":
			var p plumbing.Hash
			p, err = parseHash(val)
			parents = append(parents, p)
		}
		if err != nil {
			return plumbing.ZeroHash, nil, fmt.Errorf("parse commit: %w", err)
		}
	}
	if tree.IsZero() {
		return plumbing.ZeroHash, nil, errors.New("parse commit: no tree header")
	}
	return tree, parents, nil
}

// fromHex parses a full 40-hex object id.
func fromHex(s string) (plumbing.Hash, bool) {
	if len(s) != 40 || !plumbing.IsHash(s) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(s), true
}

func parseHash(b []byte) (plumbing.Hash, error) {
	if len(b) != 40 {
		return plumbing.ZeroHash, fmt.Errorf("bad object id %q", b)
	}
	h, ok := fromHex(string(b))
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("bad object id %q", b)
	}
	return h, nil
}

// rawEntry is one entry of a tree object.
type rawEntry struct {
	name string
	mode uint32
	hash plumbing.Hash
}

func (e rawEntry) isTree() bool    { return e.mode&0o170000 == 0o040000 }
func (e rawEntry) isGitlink() bool { return e.mode&0o170000 == 0o160000 }

// parseTree parses a tree object's content: entries of
// "<octal mode> <name>\0<20-byte id>".
func parseTree(h plumbing.Hash, data []byte) ([]rawEntry, error) {
	var out []rawEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp || len(data) < nul+1+20 {
			return nil, fmt.Errorf("parse tree %s: truncated entry", h)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("parse tree %s: bad mode %q", h, data[:sp])
		}
		e := rawEntry{name: string(data[sp+1 : nul]), mode: uint32(mode)}
		copy(e.hash[:], data[nul+1:nul+21])
		data = data[nul+21:]
		out = append(out, e)
	}
	return out, nil
}

// flatten walks the tree rooted at root and returns every path in it,
// refusing paths that could escape the destination or touch .git.
func flatten(r *objectReader, root plumbing.Hash) (*flatTree, error) {
	ft := &flatTree{trees: []plumbing.Hash{root}}
	var walk func(h plumbing.Hash, prefix string, depth int) error
	walk = func(h plumbing.Hash, prefix string, depth int) error {
		if depth > maxTreeDepth {
			return fmt.Errorf("%w: %q: trees nested deeper than %d", ErrUnsafePath, prefix, maxTreeDepth)
		}
		entries, err := readTree(r, h)
		if err != nil {
			return fmt.Errorf("%w (at %q)", err, prefix)
		}
		for _, e := range entries {
			if err := checkName(e.name); err != nil {
				return fmt.Errorf("%w: %q in %q", err, e.name, prefix)
			}
			p := e.name
			if prefix != "" {
				p = prefix + "/" + e.name
			}
			switch e.mode & 0o170000 {
			case 0o040000:
				ft.dirs = append(ft.dirs, p)
				ft.trees = append(ft.trees, e.hash)
				if err := walk(e.hash, p, depth+1); err != nil {
					return err
				}
			case 0o120000:
				ft.entries = append(ft.entries, treeEntry{path: p, hash: e.hash, kind: kindSymlink})
			case 0o160000:
				ft.entries = append(ft.entries, treeEntry{path: p, hash: e.hash, kind: kindGitlink})
			case 0o100000:
				// git archive and checkout look only at the owner's
				// execute bit (100664 from old repositories is 0644).
				k := kindFile
				if e.mode&0o100 != 0 {
					k = kindExec
				}
				ft.entries = append(ft.entries, treeEntry{path: p, hash: e.hash, kind: k})
			default:
				return fmt.Errorf("parse tree %s: unsupported mode %o for %q", h, e.mode, p)
			}
		}
		return nil
	}
	if err := walk(root, "", 0); err != nil {
		return nil, err
	}
	return ft, nil
}

// maxTreeDepth bounds recursion on hostile trees; real repositories stay
// far below it (git itself caps at core.maxTreeDepth, 2048 by default).
const maxTreeDepth = 2048

// checkName refuses a tree entry name that is not a single safe path
// component: empty, ".", "..", containing a slash or NUL, or naming .git
// in any letter case (as git's verify_path does for case-insensitive
// file systems).
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return ErrUnsafePath
	case strings.ContainsAny(name, "/\x00"):
		return ErrUnsafePath
	case strings.EqualFold(name, ".git"):
		return ErrUnsafePath
	}
	return nil
}

// missing marks an absent object as ErrObjectMissing.
func missing(err error) error {
	if errors.Is(err, errObjectNotFound) {
		return ErrObjectMissing
	}
	return err
}
