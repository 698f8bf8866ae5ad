package swebenchtest

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// BuildTestbedImage builds, on c's engine, an image laid out like the
// official instance images: testenv.Image() with dir copied to /testbed
// (owned by root), tagged with each of tags, which are removed when the
// test ends.
func BuildTestbedImage(t testing.TB, c *sandbox.Client, dir string, tags ...string) {
	t.Helper()
	BuildImage(t, c, dir, "testbed", "FROM "+testenv.Image()+"\nCOPY testbed /testbed\nWORKDIR /testbed\n", tags...)
}

// BuildImage builds, on c's engine, dockerfile over a context of the files
// of dir, put under prefix ("" for the context's root; a family's harness
// builds a row's image over a checkout so), tagged with each of tags,
// which are removed when the test ends.
func BuildImage(t testing.TB, c *sandbox.Client, dir, prefix, dockerfile string, tags ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := path.Join(prefix, filepath.ToSlash(rel))
		if name == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = name
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	}))
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte(dockerfile))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	_, err = c.BuildImage(context.Background(), sandbox.BuildRequest{Context: &buf, Tags: tags, NetworkMode: "none"})
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, tag := range tags {
			assert.NoError(t, c.RemoveImage(context.Background(), tag))
		}
	})
}
