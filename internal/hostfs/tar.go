package hostfs

import (
	"archive/tar"
	"io/fs"
)

// TarHeader is the tar header of the file that info describes (as Lstat
// gives it), stored as name, for the tar streams made of host files: the
// build context of a task directory (swebench/imagebuild) and a host path
// copied into a sandbox (sandbox), which walk the host differently (one
// confined to an [os.Root], one not) and share how an entry is described.
// A symlink is stored as a link to the target readlink returns, not
// followed (readlink is called for symlinks only), and no entry has an
// owner (uid and gid 0, no user or group names), so the stream says nothing
// of the host's accounts and the receiver's defaults apply.
func TarHeader(info fs.FileInfo, name string, readlink func() (string, error)) (*tar.Header, error) {
	link := ""
	if info.Mode()&fs.ModeSymlink != 0 {
		var err error
		if link, err = readlink(); err != nil {
			return nil, err
		}
	}
	h, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return nil, err
	}
	h.Name = name
	h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
	return h, nil
}
