package repo

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fileStat is the lstat data git keeps per index entry.
type fileStat struct {
	ctime, mtime       time.Time
	dev, ino, uid, gid uint32
	size               uint32
}

// gitConfig is the workspace repository's config. gc.auto=0 keeps git
// from repacking inside the sandbox; the object store is mostly borrowed
// through alternates and there is nothing worth packing.
const gitConfig = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	symlinks = true
	ignorecase = false
	autocrlf = false
[gc]
	auto = 0
`

// initGitDir creates dst/.git with HEAD detached at commit, a minimal
// config and, when alternates is not empty, objects/info/alternates naming
// those object directories. The index comes once the files are written
// (writeIndex). It returns the .git path.
func initGitDir(dst string, commit plumbing.Hash, alternates []string) (string, error) {
	gd := filepath.Join(dst, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(gd, filepath.FromSlash(d)), 0o755); err != nil {
			return "", fmt.Errorf("create .git: %w", err)
		}
	}
	files := map[string]string{
		"HEAD":   commit.String() + "\n",
		"config": gitConfig,
	}
	if len(alternates) > 0 {
		files["objects/info/alternates"] = strings.Join(alternates, "\n") + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(gd, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("create .git: %w", err)
		}
	}
	return gd, nil
}

// writeIndex writes a version 2 index with one stage-0 entry per path,
// with the lstat data of the files just written, so that git status is
// clean without rehashing them.
func writeIndex(path string, ft *flatTree) error {
	idx := &index.Index{Version: 2, Entries: make([]*index.Entry, 0, len(ft.entries))}
	for i := range ft.entries {
		e := &ft.entries[i]
		idx.Entries = append(idx.Entries, &index.Entry{
			Hash:       e.hash,
			Name:       e.path,
			CreatedAt:  e.stat.ctime,
			ModifiedAt: e.stat.mtime,
			Dev:        e.stat.dev,
			Inode:      e.stat.ino,
			Mode:       e.kind.indexMode(),
			UID:        e.stat.uid,
			GID:        e.stat.gid,
			Size:       e.stat.size,
		})
	}
	var buf bytes.Buffer
	buf.Grow(len(idx.Entries) * 96)
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return nil
}

// chownGitDir gives dst itself and everything in gitDir to owner.
func chownGitDir(dst, gitDir string, owner Owner) error {
	if err := os.Lchown(dst, owner.UID, owner.GID); err != nil {
		return fmt.Errorf("chown workspace: %w", err)
	}
	err := filepath.WalkDir(gitDir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, owner.UID, owner.GID)
	})
	if err != nil {
		return fmt.Errorf("chown workspace: %w", err)
	}
	return nil
}
