//go:build linux || darwin || freebsd || netbsd || openbsd

package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// writeFile creates path (which must not exist; a symlink there is not
// followed) with exactly mode perm and content data, and returns the
// file's stat data for the index. Raw system calls: four per file (more
// to chown or to beat the umask), no
// poller registration or finalizer, which shows on trees of many small
// files.
func writeFile(path string, data []byte, perm uint32, wo writeOpts) (fileStat, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return fileStat{}, fmt.Errorf("create file: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	st, err := fillFile(fd, data, perm, wo)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fileStat{}, fmt.Errorf("write file: %w", &fs.PathError{Op: "write", Path: path, Err: err})
	}
	return st, nil
}

func fillFile(fd int, data []byte, perm uint32, wo writeOpts) (fileStat, error) {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fileStat{}, err
		}
		data = data[n:]
	}
	if wo.owner != nil {
		if err := syscall.Fchown(fd, wo.owner.UID, wo.owner.GID); err != nil {
			return fileStat{}, err
		}
	}
	if fs.FileMode(perm)&wo.umask != 0 {
		// Modes are exact (0644 / 0755) whatever the umask, as in the
		// git archive tarball; the index records only the exec bit.
		if err := syscall.Fchmod(fd, perm); err != nil {
			return fileStat{}, err
		}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fileStat{}, err
	}
	return statFromSys(&st), nil
}

// statOf takes the lstat data git keeps in its index, so that git sees the
// files written by a checkout as clean without rehashing them.
func statOf(fi fs.FileInfo) fileStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{mtime: fi.ModTime(), ctime: fi.ModTime(), size: uint32(fi.Size())}
	}
	return statFromSys(st)
}

func statFromSys(st *syscall.Stat_t) fileStat {
	cs, cns, ms, mns := statTimes(st)
	return fileStat{
		ctime: time.Unix(cs, cns),
		mtime: time.Unix(ms, mns),
		dev:   uint32(st.Dev),
		ino:   uint32(st.Ino),
		uid:   st.Uid,
		gid:   st.Gid,
		size:  uint32(st.Size),
	}
}
