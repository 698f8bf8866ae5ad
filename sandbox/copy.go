package sandbox

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/swebox/swebox/internal/hostfs"
)

// DefaultCopyLimit caps the bytes of file content one copy moves.
const DefaultCopyLimit = 1 << 30

// CopyInRequest copies files into a sandbox.
type CopyInRequest struct {
	// Tar is a tar stream to extract at Dest. Exactly one of Tar and
	// HostPath is set.
	Tar io.Reader
	// HostPath is a file or directory on the host, copied to Dest under its
	// base name. Symlinks are copied as symlinks.
	HostPath string
	// Dest is an absolute directory in the container.
	Dest string
	// MaxBytes caps the file content copied. Default 1 GiB.
	MaxBytes int64
	// ContentsOnly copies what the HostPath directory holds into Dest,
	// without the directory itself.
	ContentsOnly bool
	// KeepEscapingSymlinks stores symlinks whose target leaves Dest as
	// they are, instead of refusing them: a repository's symlinks are data.
	// Nothing is ever written through a symlink either way.
	KeepEscapingSymlinks bool
}

// CopyOutRequest copies a file or directory out of a sandbox.
type CopyOutRequest struct {
	// Src is an absolute path in the container.
	Src string
	// Dest is a host directory; Src is written under it by its base name.
	Dest string
	// MaxBytes caps the file content copied. Default 1 GiB.
	MaxBytes int64
}

// CopyResult counts what a copy moved.
type CopyResult struct {
	Files int
	Bytes int64
}

// CopyIn streams files into the sandbox. Entries with absolute names, ".."
// components, symlinks that leave Dest or paths through such symlinks are
// refused with a *PathError before anything past them is written; more than
// MaxBytes fails with ErrCopyLimit.
func (s *Sandbox) CopyIn(ctx context.Context, req CopyInRequest) (CopyResult, error) {
	if !path.IsAbs(req.Dest) {
		return CopyResult{}, &SpecError{Field: "CopyInRequest.Dest", Reason: fmt.Sprintf("%q must be an absolute container path", req.Dest)}
	}
	if (req.Tar == nil) == (req.HostPath == "") {
		return CopyResult{}, &SpecError{Field: "CopyInRequest", Reason: "set exactly one of Tar and HostPath"}
	}
	if err := s.begin(); err != nil {
		return CopyResult{}, err
	}
	defer s.end()
	src := req.Tar
	if req.HostPath != "" {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(tarHostPath(req.HostPath, req.ContentsOnly, pw)) }()
		defer pr.Close()
		src = pr
	}
	pr, pw := io.Pipe()
	var res CopyResult
	filtered := make(chan error, 1)
	go func() {
		var err error
		uid, gid, _ := parseUser(s.spec.User)
		res, err = filterTar(src, pw, pathChecker{keepEscaping: req.KeepEscapingSymlinks}, limitOr(req.MaxBytes), uid, gid)
		pw.CloseWithError(err)
		filtered <- err
	}()
	var err error
	if ar, ok := s.archiver(req.Dest); ok {
		if err = ar.CopyIn(ctx, s.id, req.Dest, pr); err != nil {
			err = s.c.engineErr("copy into sandbox", err)
		}
	} else {
		err = s.execTar(ctx, []string{"tar", "-x", "-f", "-", "-C", req.Dest}, pr, nil)
	}
	pr.Close()
	// The filter's refusal explains a broken stream better than the engine's.
	if ferr := <-filtered; ferr != nil && !errors.Is(ferr, io.ErrClosedPipe) {
		return res, ferr
	}
	return res, err
}

// CopyOut streams Src out of the sandbox into the host directory Dest, with
// the same refusals as CopyIn; in particular a symlink pointing outside Dest
// (e.g. to /etc/passwd) is refused, never followed.
func (s *Sandbox) CopyOut(ctx context.Context, req CopyOutRequest) (CopyResult, error) {
	if !path.IsAbs(req.Src) {
		return CopyResult{}, &SpecError{Field: "CopyOutRequest.Src", Reason: fmt.Sprintf("%q must be an absolute container path", req.Src)}
	}
	if req.Dest == "" {
		return CopyResult{}, &SpecError{Field: "CopyOutRequest.Dest", Reason: "required"}
	}
	if err := s.begin(); err != nil {
		return CopyResult{}, err
	}
	defer s.end()
	if err := os.MkdirAll(req.Dest, 0o755); err != nil {
		return CopyResult{}, fmt.Errorf("create destination: %w", err)
	}
	root, err := os.OpenRoot(req.Dest)
	if err != nil {
		return CopyResult{}, fmt.Errorf("open destination: %w", err)
	}
	defer root.Close()
	if ar, ok := s.archiver(req.Src); ok {
		rc, err := ar.CopyOut(ctx, s.id, req.Src)
		if err != nil {
			return CopyResult{}, s.c.engineErr("copy from sandbox", err)
		}
		defer rc.Close()
		return extractTar(rc, root, limitOr(req.MaxBytes))
	}
	pr, pw := io.Pipe()
	var res CopyResult
	var xerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, xerr = extractTar(pr, root, limitOr(req.MaxBytes))
		if xerr != nil {
			pr.CloseWithError(xerr)
			return
		}
		_, _ = io.Copy(io.Discard, pr) // tar's trailing padding
	}()
	dir, base := path.Split(path.Clean(req.Src))
	err = s.execTar(ctx, []string{"tar", "-c", "-f", "-", "-C", dir, base}, nil, pw)
	pw.CloseWithError(err)
	<-done
	if err != nil && !s.exists(ctx, req.Src) {
		return res, &fs.PathError{Op: "copy out", Path: req.Src, Err: fs.ErrNotExist}
	}
	if xerr != nil {
		return res, xerr
	}
	return res, err
}

// exists reports whether p is there for the sandbox's user, a dangling
// symlink included; true when that cannot be told, so that the caller
// keeps tar's own error.
func (s *Sandbox) exists(ctx context.Context, p string) bool {
	res, err := s.runInternal(ctx, []string{"test", "-e", p, "-o", "-L", p}, s.spec.User, nil, io.Discard)
	return err != nil || res.ExitCode == 0
}

// archiver returns the backend's archive endpoint when it has one that sees
// p. Docker's does not see a tmpfs: it reads and writes the container's root
// layer beneath it. Elsewhere copies run tar in the sandbox through exec.
func (s *Sandbox) archiver(p string) (archiver, bool) {
	ar, ok := s.c.b.(archiver)
	if !ok || s.onTmpfs(p) || info(s.c.b).ArchiveFollowsLinks {
		return nil, false
	}
	return ar, true
}

// onTmpfs reports whether p is on a tmpfs.
func (s *Sandbox) onTmpfs(p string) bool {
	p = path.Clean(p)
	under := func(dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	if under("/tmp") {
		return true
	}
	for _, m := range s.spec.Mounts {
		if m.Type == "tmpfs" && under(path.Clean(m.Target)) {
			return true
		}
	}
	return false
}

// execTar runs tar in the sandbox as the sandbox's user with stdin and stdout
// wired to the given stream ends.
func (s *Sandbox) execTar(ctx context.Context, cmd []string, stdin io.Reader, stdout io.Writer) error {
	res, err := s.runInternal(ctx, cmd, s.spec.User, stdin, stdout)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s in container exited %d: %s", strings.Join(cmd[:2], " "), res.ExitCode, strings.TrimSpace(res.Stderr.String()))
	}
	return nil
}

func limitOr(n int64) int64 {
	if n <= 0 {
		return DefaultCopyLimit
	}
	return n
}

// pathChecker refuses tar entries that would escape the destination.
type pathChecker struct {
	links        map[string]bool // entries that are symlinks
	keepEscaping bool            // store symlinks that leave the destination
}

// check validates an entry name and, for symlinks, the target. It returns
// the cleaned relative name.
func (pc *pathChecker) check(h *tar.Header) (string, error) {
	name := h.Name
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\x00") {
		return "", &PathError{Path: name, Reason: "absolute or empty entry name"}
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", &PathError{Path: name, Reason: `".." component`}
		}
	}
	clean := path.Clean(name)
	// No entry may be written through a symlink written before it.
	for p := path.Dir(clean); p != "." && p != "/"; p = path.Dir(p) {
		if pc.links[p] {
			return "", &PathError{Path: name, Reason: fmt.Sprintf("under symlink %q", p)}
		}
	}
	switch h.Typeflag {
	case tar.TypeSymlink:
		if !pc.keepEscaping && !linkStaysInside(clean, h.Linkname) {
			return "", &PathError{Path: name, Reason: fmt.Sprintf("symlink to %q leaves the destination", h.Linkname)}
		}
		if pc.links == nil {
			pc.links = map[string]bool{}
		}
		pc.links[clean] = true
	case tar.TypeLink:
		if path.IsAbs(h.Linkname) || !linkStaysInside(".", h.Linkname) {
			return "", &PathError{Path: name, Reason: fmt.Sprintf("hard link to %q leaves the destination", h.Linkname)}
		}
	}
	return clean, nil
}

// linkStaysInside reports whether target, read relative to the directory of
// name, stays inside the root that name is relative to.
func linkStaysInside(name, target string) bool {
	if target == "" || path.IsAbs(target) {
		return false
	}
	depth := strings.Count(path.Dir(name), "/") + 1
	if path.Dir(name) == "." {
		depth = 0
	}
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}

// filterTar copies a tar stream, refusing unsafe entries and enforcing the
// byte cap. Entries are owned by uid:gid, the sandbox's user, so that it can
// change what it was given.
func filterTar(r io.Reader, w io.Writer, pc pathChecker, limit int64, uid, gid int) (CopyResult, error) {
	var res CopyResult
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return res, tw.Close()
		}
		if err != nil {
			return res, fmt.Errorf("read tar: %w", err)
		}
		if _, err := pc.check(h); err != nil {
			return res, err
		}
		if res.Bytes+h.Size > limit {
			return res, fmt.Errorf("%w: more than %d bytes", ErrCopyLimit, limit)
		}
		h.Uid, h.Gid, h.Uname, h.Gname = uid, gid, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return res, fmt.Errorf("write tar: %w", err)
		}
		n, err := io.Copy(tw, tr)
		if err != nil {
			return res, fmt.Errorf("copy %s: %w", h.Name, err)
		}
		res.Bytes += n
		if h.Typeflag == tar.TypeReg {
			res.Files++
		}
	}
}

// extractTar writes a tar stream under root: directories, regular files and
// symlinks; other entry types are skipped.
func extractTar(r io.Reader, root *os.Root, limit int64) (CopyResult, error) {
	var res CopyResult
	var pc pathChecker
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("read tar: %w", err)
		}
		name, err := pc.check(h)
		if err != nil {
			return res, err
		}
		if res.Bytes+h.Size > limit {
			return res, fmt.Errorf("%w: more than %d bytes", ErrCopyLimit, limit)
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return res, fmt.Errorf("create %s: %w", dir, err)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return res, fmt.Errorf("create %s: %w", name, err)
			}
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				return res, fmt.Errorf("create %s: %w", name, err)
			}
			n, err := io.Copy(f, io.LimitReader(tr, limit-res.Bytes+1))
			cerr := f.Close()
			res.Bytes += n
			if err != nil || cerr != nil {
				return res, fmt.Errorf("write %s: %w", name, errors.Join(err, cerr))
			}
			res.Files++
		case tar.TypeSymlink:
			_ = root.Remove(name)
			if err := root.Symlink(h.Linkname, name); err != nil {
				return res, fmt.Errorf("create symlink %s: %w", name, err)
			}
		}
	}
}

// tarHostPath writes a host file or directory tree to w as a tar stream,
// named by its base name, or with contentsOnly relative to the directory;
// symlinks are stored, not followed.
func tarHostPath(hostPath string, contentsOnly bool, w io.Writer) error {
	tw := tar.NewWriter(w)
	base := filepath.Dir(filepath.Clean(hostPath))
	if contentsOnly {
		base = filepath.Clean(hostPath)
	}
	err := filepath.WalkDir(hostPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil // the directory itself, with contentsOnly
		}
		h, err := hostfs.TarHeader(info, filepath.ToSlash(rel), func() (string, error) { return os.Readlink(p) })
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(tw, f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tar %s: %w", hostPath, err)
	}
	return tw.Close()
}
