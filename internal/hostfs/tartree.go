package hostfs

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"time"
)

// TarTree writes to tw every entry below root (a build context on the
// host), confined to it: directories with a trailing slash, symlinks as
// links ([TarHeader]), regular files with their content, every time the
// epoch so that the stream depends on the content only. include decides,
// for each slash-separated path, whether it goes in (a directory left out
// is not walked); an error it returns stops the walk.
func TarTree(tw *tar.Writer, root *os.Root, include func(p string) (bool, error)) error {
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		ok, err := include(p)
		if err != nil {
			return err
		}
		if !ok {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := root.Lstat(p)
		if err != nil {
			return err
		}
		hdr, err := TarHeader(info, p, func() (string, error) { return root.Readlink(p) })
		if err != nil {
			return err
		}
		hdr.ModTime = time.Unix(0, 0)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
}
