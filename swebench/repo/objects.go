package repo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// maxAlternateDepth is git's own limit on chained alternates
// (link_alt_odb_entries refuses deeper nesting).
const maxAlternateDepth = 5

// objectStore reads the objects of a repository straight from its objects
// directories: the repository's own and its alternates, in git's lookup
// order. It never writes to them.
//
// go-git's filesystem storage is not used for reading: it is not safe for
// concurrent use, it reopens (and re-indexes) every alternate on each
// lookup that misses the primary directory, and its pack scanner hashes
// every byte it reads and every object it caches. Here go-git's index
// decoder and delta patcher do the format work; the pack indexes are
// loaded once and shared, each goroutine reads through its own
// [objectReader] (buffers, zlib state), and all share the pack files (read
// with pread) and one cache of delta bases.
type objectStore struct {
	dirs  []string // absolute objects directories, primary first
	packs []*pack
	bases *baseCache
}

// pack is one pack file and its index. The file is opened on first use
// and shared: reads go through ReadAt, which is safe for concurrent use.
type pack struct {
	path string // the .pack file
	idx  *idxfile.MemoryIndex

	once sync.Once
	f    *os.File
	err  error
}

func (p *pack) file() (*os.File, error) {
	p.once.Do(func() {
		p.f, p.err = os.Open(p.path)
		if p.err != nil {
			p.err = fmt.Errorf("open pack: %w", p.err)
		}
	})
	return p.f, p.err
}

// Close closes the pack files.
func (s *objectStore) Close() error {
	var errs []error
	for _, p := range s.packs {
		p.once.Do(func() {}) // no open after Close
		if p.f != nil {
			errs = append(errs, p.f.Close())
		}
	}
	return errors.Join(errs...)
}

// location says where an object lives, so that callers can sort reads by
// pack and offset: reading a pack front to back keeps delta bases hot.
type location struct {
	pack   int // index into objectStore.packs, -1 for a loose object
	offset int64
}

// openObjectStore loads the pack indexes of objectsDir and of every
// alternate it names, directly or through other alternates.
func openObjectStore(objectsDir string, cacheBytes int64) (*objectStore, error) {
	dirs, err := alternateChain(objectsDir)
	if err != nil {
		return nil, err
	}
	s := &objectStore{dirs: dirs, bases: newBaseCache(cacheBytes)}
	for _, dir := range dirs {
		packs, err := loadPacks(dir)
		if err != nil {
			return nil, err
		}
		s.packs = append(s.packs, packs...)
	}
	return s, nil
}

// alternateChain returns objectsDir followed by its alternates, depth first
// as git visits them, each directory once.
func alternateChain(objectsDir string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("resolve objects directory: %w", err)
		}
		if seen[abs] {
			return nil
		}
		if depth > maxAlternateDepth {
			return fmt.Errorf("read alternates of %s: nested deeper than %d", abs, maxAlternateDepth)
		}
		fi, err := os.Stat(abs)
		if depth > 0 && errors.Is(err, fs.ErrNotExist) {
			return nil // git too only warns about a vanished alternate
		}
		if err != nil {
			return fmt.Errorf("open objects directory: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("open objects directory %s: not a directory", abs)
		}
		seen[abs] = true
		dirs = append(dirs, abs)
		alts, err := readAlternates(abs)
		if err != nil {
			return err
		}
		for _, alt := range alts {
			if err := visit(alt, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(objectsDir, 0); err != nil {
		return nil, err
	}
	return dirs, nil
}

// readAlternates parses objects/info/alternates: one directory per line,
// relative ones taken relative to the objects directory, lines starting
// with '#' ignored, C-style quoted paths unquoted.
func readAlternates(objectsDir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(objectsDir, "info", "alternates"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read alternates: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			if uq, err := strconv.Unquote(line); err == nil {
				line = uq
			}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objectsDir, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out, nil
}

// loadPacks loads the index of every pack in objectsDir/pack that has both
// its .idx and its .pack.
func loadPacks(objectsDir string) ([]*pack, error) {
	packDir := filepath.Join(objectsDir, "pack")
	names, err := os.ReadDir(packDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list packs: %w", err)
	}
	var packs []*pack
	for _, de := range names {
		name := de.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		packPath := filepath.Join(packDir, strings.TrimSuffix(name, ".idx")+".pack")
		if _, err := os.Stat(packPath); err != nil {
			continue // a pack being written, or removed by a repack
		}
		idx, err := loadIndex(filepath.Join(packDir, name))
		if err != nil {
			return nil, err
		}
		packs = append(packs, &pack{path: packPath, idx: idx})
	}
	return packs, nil
}

func loadIndex(path string) (*idxfile.MemoryIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open pack index: %w", err)
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(idx); err != nil {
		return nil, fmt.Errorf("decode pack index %s: %w", path, err)
	}
	return idx, nil
}

// locate finds an object without reading it.
func (s *objectStore) locate(h plumbing.Hash) (location, bool) {
	for i, p := range s.packs {
		if off, err := p.idx.FindOffset(h); err == nil {
			return location{pack: i, offset: off}, true
		}
	}
	for _, dir := range s.dirs {
		if _, err := os.Stat(looseObjectPath(dir, h)); err == nil {
			return location{pack: -1}, true
		}
	}
	return location{}, false
}

// has reports whether the object is present.
func (s *objectStore) has(h plumbing.Hash) bool {
	_, ok := s.locate(h)
	return ok
}

func looseObjectPath(objectsDir string, h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(objectsDir, hex[:2], hex[2:])
}

// objectReader reads objects from an objectStore. It is not safe for
// concurrent use; each goroutine takes its own. Its buffers and zlib state
// are reused from one object to the next.
type objectReader struct {
	store   *objectStore
	stream  packStream
	zr      io.ReadCloser
	one     [1]byte
	scratch []byte
}

// maxScratch bounds the reusable buffer; larger objects get their own.
const maxScratch = 8 << 20

func (s *objectStore) reader() *objectReader {
	return &objectReader{store: s}
}

// Close releases the reader's zlib state. The pack files belong to the
// store.
func (r *objectReader) Close() error {
	if r.zr != nil {
		return r.zr.Close()
	}
	return nil
}

// errObjectNotFound is returned by objectReader.read for an absent object;
// callers turn it into an error that names the object's role.
var errObjectNotFound = plumbing.ErrObjectNotFound

// readBytes returns the object's type and content. The content may be
// shared with the store's delta base cache: callers must not modify it.
func (r *objectReader) readBytes(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	loc, ok := r.store.locate(h)
	if !ok {
		return plumbing.InvalidObject, nil, errObjectNotFound
	}
	return r.readAt(h, loc)
}

// readAt reads an object already located.
func (r *objectReader) readAt(h plumbing.Hash, loc location) (plumbing.ObjectType, []byte, error) {
	return r.readAtInto(h, loc, false)
}

// readTransient is readAt for content the caller consumes before its next
// read: an undeltified object is then inflated into a buffer the reader
// reuses, which spares the garbage collector most of a checkout's bytes.
func (r *objectReader) readTransient(h plumbing.Hash, loc location) (plumbing.ObjectType, []byte, error) {
	return r.readAtInto(h, loc, true)
}

func (r *objectReader) readAtInto(h plumbing.Hash, loc location, transient bool) (plumbing.ObjectType, []byte, error) {
	if loc.pack < 0 {
		return r.readLoose(h)
	}
	t, data, err := r.packed(loc.pack, loc.offset, 0, transient)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read object %s from %s: %w", h, r.store.packs[loc.pack].path, err)
	}
	return t, data, nil
}

// maxDeltaDepth bounds delta chains; git writes at most 4095 (--depth).
const maxDeltaDepth = 10000

// packed reads the object at offset off of pack pi, resolving deltas
// against bases that are cached as git's delta base cache does.
// With transient, an undeltified object lands in the reader's scratch
// buffer (see readTransient); bases never do, as they are cached.
func (r *objectReader) packed(pi int, off int64, depth int, transient bool) (plumbing.ObjectType, []byte, error) {
	if t, data, ok := r.store.bases.get(baseKey{pi, off}); ok {
		return t, data, nil
	}
	if depth > maxDeltaDepth {
		return plumbing.InvalidObject, nil, errors.New("delta chain too long")
	}
	p := r.store.packs[pi]
	f, err := p.file()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	r.stream.reset(f, off)
	t, size, err := r.stream.objectHeader()
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("read object header at %d: %w", off, err)
	}
	var baseOff int64
	var baseHash plumbing.Hash
	switch t {
	case plumbing.OFSDeltaObject:
		rel, err := r.stream.ofsDeltaOffset()
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if rel <= 0 || rel > off {
			return plumbing.InvalidObject, nil, fmt.Errorf("bad delta base offset at %d", off)
		}
		baseOff = off - rel
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(&r.stream, baseHash[:]); err != nil {
			return plumbing.InvalidObject, nil, err
		}
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return plumbing.InvalidObject, nil, fmt.Errorf("bad object type %d at %d", t, off)
	}
	r.stream.expect(size)
	data, err := r.inflate(size, transient && !t.IsDelta())
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("inflate object at %d: %w", off, err)
	}
	if !t.IsDelta() {
		return t, data, nil
	}

	var bt plumbing.ObjectType
	var base []byte
	if t == plumbing.OFSDeltaObject {
		bt, base, err = r.packed(pi, baseOff, depth+1, false)
		if err == nil {
			r.store.bases.put(baseKey{pi, baseOff}, bt, base)
		}
	} else {
		loc, ok := r.store.locate(baseHash)
		switch {
		case !ok:
			err = fmt.Errorf("delta base %s: %w", baseHash, errObjectNotFound)
		case loc.pack < 0:
			bt, base, err = r.readLoose(baseHash)
		default:
			bt, base, err = r.packed(loc.pack, loc.offset, depth+1, false)
			if err == nil {
				r.store.bases.put(baseKey(loc), bt, base)
			}
		}
	}
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	out, err := packfile.PatchDelta(base, data)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("apply delta at %d: %w", off, err)
	}
	return bt, out, nil
}

// inflate reads one zlib stream of exactly size bytes from the stream,
// checking its Adler-32 trailer, into a new slice or, with reuse, into the
// reader's scratch buffer.
func (r *objectReader) inflate(size int64, reuse bool) ([]byte, error) {
	if r.zr == nil {
		zr, err := zlib.NewReader(&r.stream)
		if err != nil {
			return nil, err
		}
		r.zr = zr
	} else if err := r.zr.(zlib.Resetter).Reset(&r.stream, nil); err != nil {
		return nil, err
	}
	var data []byte
	if reuse && size <= maxScratch {
		if int64(cap(r.scratch)) < size {
			r.scratch = make([]byte, max(size, 64<<10))
		}
		data = r.scratch[:size]
	} else {
		data = make([]byte, size)
	}
	if _, err := io.ReadFull(r.zr, data); err != nil {
		return nil, err
	}
	// Reading past the end verifies the checksum and the size.
	if n, err := r.zr.Read(r.one[:]); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = errors.New("object longer than its header says")
		}
		return nil, err
	}
	return data, nil
}

func (r *objectReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	for _, dir := range r.store.dirs {
		f, err := os.Open(looseObjectPath(dir, h))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("open loose object: %w", err)
		}
		t, data, err := decodeLoose(f)
		f.Close()
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("read loose object %s: %w", h, err)
		}
		return t, data, nil
	}
	return plumbing.InvalidObject, nil, errObjectNotFound
}

func decodeLoose(f io.Reader) (plumbing.ObjectType, []byte, error) {
	zr, err := objfile.NewReader(bufio.NewReaderSize(f, 1<<15))
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer zr.Close()
	t, size, err := zr.Header()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	return t, data, nil
}
