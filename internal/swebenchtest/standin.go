package swebenchtest

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/sandbox"
)

// StandinBase builds the stand-in base image of an image build under name
// (upstream's base image name, e.g. sweb.base.py.x86_64:latest): the files
// of swebench/imagebuild/testdata/standin, whose README says which download
// each replaces, with each bare repository of gitDirs (owner/name → git
// directory) served where upstream's clone URL for it leads. It skips the
// test when name exists on c's engine, as it would not be the test's to
// replace. The caller removes the image.
func StandinBase(t testing.TB, c *sandbox.Client, name string, gitDirs map[string]string) {
	t.Helper()
	ctx := context.Background()
	if ok, err := c.HasImage(ctx, name); err != nil || ok {
		require.NoError(t, err)
		t.Skipf("%s exists on this engine and is not this test's; not replacing it", name)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	addTree(t, tw, filepath.Join(moduleRoot(t), "swebench", "imagebuild", "testdata", "standin"), ".")
	for repo, dir := range gitDirs {
		addTree(t, tw, dir, "git/"+repo)
	}
	require.NoError(t, tw.Close())
	_, err := c.BuildImage(ctx, sandbox.BuildRequest{Context: &buf, Tags: []string{name}, NetworkMode: "none"})
	require.NoError(t, err)
}

// addTree adds the files under dir to tw under prefix.
func addTree(t testing.TB, tw *tar.Writer, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(info.Mode().Perm() | 0o644), Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	require.NoError(t, err)
}
