//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package repo

import (
	"fmt"
	"io/fs"
	"os"
)

// writeFile creates path, which must not exist, with mode perm.
func writeFile(path string, data []byte, perm uint32, wo writeOpts) (fileStat, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return fileStat{}, fmt.Errorf("create file: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && wo.owner != nil {
		err = f.Chown(wo.owner.UID, wo.owner.GID)
	}
	var fi fs.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileStat{}, fmt.Errorf("write file: %w", err)
	}
	return statOf(fi), nil
}

func statOf(fi fs.FileInfo) fileStat {
	return fileStat{mtime: fi.ModTime(), ctime: fi.ModTime(), size: uint32(fi.Size())}
}

func currentUmask() fs.FileMode { return 0o777 }
