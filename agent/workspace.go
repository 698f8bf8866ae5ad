package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/swebox/swebox/internal/hostfs"
	"github.com/swebox/swebox/sandbox"
)

// Workspace layout, relative to /workspace.
const (
	// MountsDir receives Files.
	MountsDir = "mounts"
	// OutputDir is where programs leave artifacts.
	OutputDir = "output"
	// internalDir holds the library's per-run files (code, stats).
	internalDir = ".swebox"
)

// File is an input file, written to mounts/<Name> in the workspace. Exactly
// one of Data, HostPath and URL is set.
type File struct {
	// Name is a slash-separated path under mounts/. Default: the base name
	// of HostPath or of URL's path.
	Name string
	// Data is the file's content.
	Data []byte
	// HostPath is a file or directory on the host; a directory is copied
	// with its regular files and subdirectories (symlinks are skipped).
	HostPath string
	// URL is fetched on the host (http or https), up to the manager's fetch
	// limit.
	URL string
	// Mode of the file. Default 0644.
	Mode fs.FileMode
}

func (f File) name() (string, error) {
	n := f.Name
	set := 0
	for _, ok := range []bool{f.Data != nil, f.HostPath != "", f.URL != ""} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return "", optErr("File", "set exactly one of Data, HostPath and URL (name %q)", n)
	}
	if n == "" {
		switch {
		case f.HostPath != "":
			n = filepath.Base(f.HostPath)
		case f.URL != "":
			if u, err := url.Parse(f.URL); err == nil {
				n = path.Base(u.Path)
			}
		}
	}
	if n == "" || n == "." || n == "/" || !fs.ValidPath(n) {
		return "", optErr("File.Name", "%q is not a relative slash-separated path inside mounts/", n)
	}
	return n, nil
}

// owner is the uid and gid sandboxes run as; directories the library
// creates for them are given to it, so the sandbox can write there.
var owner = func() [2]int {
	uid, gid, ok := strings.Cut(sandbox.DefaultUser, ":")
	var u, g int
	if ok {
		fmt.Sscan(uid, &u)
		fmt.Sscan(gid, &g)
	}
	return [2]int{u, g}
}()

// own hands p to the sandbox's user: chown when running as root, else a
// mode that lets anyone write (the engine maps no users).
func own(p string) error {
	if os.Geteuid() == 0 {
		return os.Lchown(p, owner[0], owner[1])
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		return os.Chmod(p, 0o777)
	case fi.Mode().IsRegular():
		return os.Chmod(p, fi.Mode().Perm()|0o666)
	}
	return nil
}

// newWorkspace creates dir with the standard layout, owned by the sandbox's
// user.
func newWorkspace(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, MountsDir), filepath.Join(dir, OutputDir), filepath.Join(dir, internalDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create workspace: %w", err)
		}
		if err := own(d); err != nil {
			return fmt.Errorf("create workspace: %w", err)
		}
	}
	return nil
}

// writeFiles puts files under mounts/ of the workspace ws. Writes go through
// an os.Root, so a symlink the sandbox planted cannot send them elsewhere.
func (m *Manager) writeFiles(ctx context.Context, ws string, files []File) error {
	if len(files) == 0 {
		return nil
	}
	root, err := openSubdir(ws, MountsDir, true)
	if err != nil {
		return fmt.Errorf("open mounts: %w", err)
	}
	defer root.Close()
	for _, f := range files {
		name, err := f.name()
		if err != nil {
			return err
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		switch {
		case f.HostPath != "":
			err = copyHostPath(root, f.HostPath, name, mode)
		case f.URL != "":
			var data []byte
			if data, err = m.fetchURL(ctx, f.URL); err == nil {
				err = writeRootFile(root, name, data, mode)
			}
		default:
			err = writeRootFile(root, name, f.Data, mode)
		}
		if err != nil {
			return fmt.Errorf("write file %s: %w", name, err)
		}
	}
	return nil
}

func mkdirOwned(root *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	if err := mkdirOwned(root, path.Dir(dir)); err != nil {
		return err
	}
	if err := root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return rootOwn(root, dir)
}

func rootOwn(root *os.Root, name string) error {
	if os.Geteuid() == 0 {
		return root.Lchown(name, owner[0], owner[1])
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return root.Chmod(name, 0o777)
	}
	return root.Chmod(name, fi.Mode().Perm()|0o666)
}

func writeRootFile(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	if err := mkdirOwned(root, path.Dir(name)); err != nil {
		return err
	}
	// A new file replaces whatever the sandbox left at name: a FIFO
	// would block the write, a hard link would take it elsewhere.
	if err := hostfs.WriteFile(root, name, data, mode); err != nil {
		return err
	}
	if err := root.Chmod(name, mode); err != nil {
		return err
	}
	return rootOwn(root, name)
}

// copyHostPath copies a host file or tree to name under root. Symlinks in
// the source are skipped: their targets are host paths.
func copyHostPath(root *os.Root, src, name string, mode fs.FileMode) error {
	return walkRel(src, func(p, rel string, d fs.DirEntry) error {
		dst := path.Join(name, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			return mkdirOwned(root, dst)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m := mode
			if p != src {
				if info, err := d.Info(); err == nil {
					m = info.Mode().Perm()
				}
			}
			return writeRootFile(root, dst, data, m)
		}
		return nil
	})
}

// fetchURL gets u with the manager's client, up to its fetch limit.
func (m *Manager) fetchURL(ctx context.Context, u string) ([]byte, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "http" && pu.Scheme != "https" {
		return nil, &FetchError{URL: u, Err: errors.New("not an http or https URL")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &FetchError{URL: u, Err: err}
	}
	resp, err := m.fetch.Do(req)
	if err != nil {
		return nil, &FetchError{URL: u, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &FetchError{URL: u, Status: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, m.fetchMax+1))
	if err != nil {
		return nil, &FetchError{URL: u, Err: err}
	}
	if int64(len(data)) > m.fetchMax {
		return nil, &FetchError{URL: u, Err: fmt.Errorf("more than %d bytes", m.fetchMax)}
	}
	return data, nil
}

// stamp identifies a version of a file under output/.
type stamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// snapshot records the files under output/ before a session's command, so
// that the command's artifacts are the files it created or changed.
func snapshot(ws string) map[string]stamp {
	snap := map[string]stamp{}
	root, err := openOutput(ws)
	if err != nil {
		return snap
	}
	defer root.Close()
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			snap[p] = stampOf(info)
		}
		return nil
	})
	return snap
}

func stampOf(info fs.FileInfo) stamp {
	return stamp{size: info.Size(), mtime: info.ModTime(), ino: inode(info)}
}

// openOutput opens output/ as a root. It refuses an output/ that is not a
// directory (a symlink, say), so nothing outside it is read.
func openOutput(ws string) (*os.Root, error) { return openSubdir(ws, OutputDir, false) }

// openSubdir opens the directory name of the workspace ws as a root. The
// workspace is opened first, so name is resolved inside it: a symlink the
// sandbox put there can never lead the host outside the workspace. With
// repair, a name that is not a directory is replaced by an empty one.
func openSubdir(ws, name string, repair bool) (*os.Root, error) {
	wsRoot, err := os.OpenRoot(ws)
	if err != nil {
		return nil, err
	}
	defer wsRoot.Close()
	fi, err := wsRoot.Lstat(name)
	switch {
	case err == nil && fi.IsDir():
	case repair && (err == nil || errors.Is(err, fs.ErrNotExist)):
		if err == nil {
			if err := wsRoot.RemoveAll(name); err != nil {
				return nil, err
			}
		}
		if err := mkdirOwned(wsRoot, name); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("%s is not a directory", name)
	}
	return wsRoot.OpenRoot(name)
}

// artifactSet is what collectArtifacts found.
type artifactSet struct {
	files            []Artifact
	dropped, skipped int
}

// collectArtifacts reads the regular files under output/ that are not in
// before (or changed since), in path order, within the caps. Symlinks and
// other special files are counted as skipped and never followed; reads go
// through an os.Root on output/. What the sandbox did to output/ (replaced
// it with a symlink, made files unreadable) is counted, never an error.
func collectArtifacts(ws string, before map[string]stamp, opts ArtifactOptions) artifactSet {
	var set artifactSet
	if opts.Disabled {
		return set
	}
	opts = opts.withDefaults()
	root, err := openOutput(ws)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			set.skipped++
		}
		return set
	}
	defer root.Close()
	budget := opts.MaxBytes
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			set.skipped++
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			set.skipped++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			set.skipped++
			return nil
		}
		if old, ok := before[p]; ok && old == stampOf(info) {
			return nil
		}
		if len(set.files) == opts.MaxFiles {
			set.dropped++
			return nil
		}
		a := Artifact{Name: path.Base(p), Path: p, Size: info.Size()}
		var head []byte
		if info.Size() <= budget {
			if data, err := readRootFile(root, p, info.Size()); err == nil {
				a.Data, head = data, data
				budget -= int64(len(data))
			}
		}
		if head == nil {
			head = readHead(root, p)
		}
		a.MIME = mimeType(p, head)
		set.files = append(set.files, a)
		return nil
	})
	sort.Slice(set.files, func(i, j int) bool { return set.files[i].Path < set.files[j].Path })
	return set
}

func readRootFile(root *os.Root, p string, size int64) ([]byte, error) {
	f, _, err := hostfs.Open(root, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may grow while it is read; never take more than was counted.
	data, err := io.ReadAll(io.LimitReader(f, size))
	if err != nil {
		return nil, err
	}
	return data, nil
}

func readHead(root *os.Root, p string) []byte {
	f, _, err := hostfs.Open(root, p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 512)
	n, _ := io.ReadFull(f, b)
	return b[:n]
}

// mimeType names a file's type by its extension, else by sniffing its
// first bytes.
func mimeType(name string, head []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(head)
}

// copyTree copies the tree at src to dst (which must not exist), keeping
// symlinks as symlinks. Regular files are hard-linked when link is set and
// the file system allows it, else copied. New directories and copied files
// belong to the sandbox's user.
func copyTree(src, dst string, link bool) error {
	return walkRel(src, func(p, rel string, d fs.DirEntry) error {
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, 0o755); err != nil {
				return err
			}
			return own(target)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(l, target); err != nil {
				return err
			}
			return own(target)
		case d.Type().IsRegular():
			if link && os.Link(p, target) == nil {
				return nil
			}
			if err := copyFile(p, target, info.Mode().Perm()); err != nil {
				return err
			}
			return own(target)
		}
		return nil
	})
}

// walkRel walks the tree at src without following symlinks, calling f with
// each entry's path and its path relative to src.
func walkRel(src string, f func(p, rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return f(p, rel, d)
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// lastLine returns the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
