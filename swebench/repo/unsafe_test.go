package repo

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawTree builds tree objects byte by byte with `git hash-object
// --literally`, which accepts what git itself would never write.
type rawTree struct {
	t   *testing.T
	dir string
}

type rawEntrySpec struct {
	mode, name, id string
}

func (r rawTree) blob(content string) string {
	return strings.TrimSpace(gitInT(r.t, r.dir, []byte(content), "hash-object", "-w", "--stdin"))
}

func (r rawTree) tree(entries ...rawEntrySpec) string {
	var buf bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e.id)
		require.NoError(r.t, err)
		buf.WriteString(e.mode + " " + e.name + "\x00")
		buf.Write(id)
	}
	return strings.TrimSpace(gitInT(r.t, r.dir, buf.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin"))
}

func (r rawTree) commit(tree string) string {
	return strings.TrimSpace(gitT(r.t, r.dir, "commit-tree", tree, "-m", "hostile"))
}

func TestCheckoutRefusesUnsafeTrees(t *testing.T) {
	sources := t.TempDir()
	dir := filepath.Join(sources, "evil", "repo.git")
	gitT(t, "", "init", "-q", "--bare", dir)
	r := rawTree{t: t, dir: dir}
	outside := t.TempDir()

	file := r.blob("payload\n")
	sub := r.tree(rawEntrySpec{"100644", "x", file})
	hook := r.tree(rawEntrySpec{"100755", "post-checkout", r.blob("#!/bin/sh\necho pwned\n")})
	link := r.blob(outside)

	type testCase struct {
		name    string
		tree    string
		wantErr error
	}
	cases := []testCase{
		{"dot-dot directory", r.tree(rawEntrySpec{"40000", "..", sub}), ErrUnsafePath},
		{"dot directory", r.tree(rawEntrySpec{"40000", ".", sub}), ErrUnsafePath},
		{".git directory", r.tree(rawEntrySpec{"40000", ".git", r.tree(rawEntrySpec{"40000", "hooks", hook})}), ErrUnsafePath},
		{".GIT directory", r.tree(rawEntrySpec{"40000", ".GIT", sub}), ErrUnsafePath},
		{"nested .git", r.tree(rawEntrySpec{"40000", "a", r.tree(rawEntrySpec{"100644", ".Git", file})}), ErrUnsafePath},
		{"slash in name", r.tree(rawEntrySpec{"100644", "a/../../x", file}), ErrUnsafePath},
		{"absolute name", r.tree(rawEntrySpec{"100644", "/tmp/x", file}), ErrUnsafePath},
		{"empty name", r.tree(rawEntrySpec{"100644", "", file}), ErrUnsafePath},
		// A symlink and a directory of the same name: writing a/x must
		// not go through the link.
		{"symlink then dir", r.tree(rawEntrySpec{"120000", "a", link}, rawEntrySpec{"40000", "a", sub}), nil},
		{"dir then symlink", r.tree(rawEntrySpec{"40000", "a", sub}, rawEntrySpec{"120000", "a", link}), nil},
	}
	c := localCache(t, sources)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "ws")
			_, err := c.Checkout(context.Background(), CheckoutRequest{Repo: "evil/repo", Commit: r.commit(tc.tree), Dir: dst})
			require.Error(t, err)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			left, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, left, "nothing written outside the destination")
			assert.NoFileExists(t, filepath.Join(filepath.Dir(dst), "x"))
			assert.NoDirExists(t, dst, "a failed checkout removes what it wrote")
		})
	}

	// The same link alone is just data: created, never followed.
	dst := filepath.Join(t.TempDir(), "ws")
	_, err := c.Checkout(context.Background(), CheckoutRequest{Repo: "evil/repo", Commit: r.commit(r.tree(rawEntrySpec{"120000", "a", link})), Dir: dst})
	require.NoError(t, err)
	target, err := os.Readlink(filepath.Join(dst, "a"))
	require.NoError(t, err)
	assert.Equal(t, outside, target)
}
