package repo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// finishSelfContained completes a self-contained .git whose blobs the
// checkout already packed: it adds the commit and its trees and, for
// `git show`, the parents with the trees and blobs that differ from the
// commit's, then seals the pack. The parents are listed in .git/shallow
// so that git does not look further back. Objects of a parent that the
// source lacks (a partial clone) are left out; git show then fails on
// them just as it would with the source itself.
func finishSelfContained(r *objectReader, pb *packBuilder, gitDir string, commit plumbing.Hash, parents []plumbing.Hash, ft *flatTree) error {
	z := newPackCompressor()
	add := func(h plumbing.Hash) error {
		if !pb.claim(h) {
			return nil
		}
		t, data, err := r.readBytes(h)
		if err != nil {
			return fmt.Errorf("pack object %s: %w", h, missing(err))
		}
		return pb.add(z, h, t, data)
	}
	if err := add(commit); err != nil {
		return err
	}
	for _, t := range ft.trees {
		if err := add(t); err != nil {
			return err
		}
	}
	var shallow []byte
	for _, p := range parents {
		if !r.store.has(p) {
			continue
		}
		shallow = append(shallow, p.String()+"\n"...)
		if err := add(p); err != nil {
			return err
		}
		_, data, err := r.readBytes(p)
		if err != nil {
			return fmt.Errorf("read parent %s: %w", p, err)
		}
		ptree, _, err := parseCommit(data)
		if err != nil {
			return err
		}
		set := newHashSet()
		if err := addTreeDiff(r, set, ptree, ft.trees[0]); err != nil {
			return err
		}
		for _, h := range set.list {
			if err := add(h); err != nil {
				return err
			}
		}
	}
	if err := pb.finish(); err != nil {
		return err
	}
	if len(shallow) > 0 {
		if err := os.WriteFile(filepath.Join(gitDir, "shallow"), shallow, 0o644); err != nil {
			return fmt.Errorf("write shallow: %w", err)
		}
	}
	return nil
}

// hashSet is an insertion-ordered set of object ids.
type hashSet struct {
	seen map[plumbing.Hash]bool
	list []plumbing.Hash
}

func newHashSet() *hashSet { return &hashSet{seen: map[plumbing.Hash]bool{}} }

func (s *hashSet) add(h plumbing.Hash) bool {
	if s.seen[h] {
		return false
	}
	s.seen[h] = true
	s.list = append(s.list, h)
	return true
}

// addTreeDiff adds to set what diffing tree old against tree cur needs
// from old: old's trees along changed paths, and old's blobs that changed
// or went away (whole subtrees when a directory went away or changed
// kind). Objects absent from the source are skipped.
func addTreeDiff(r *objectReader, set *hashSet, old, cur plumbing.Hash) error {
	if old == cur || !r.store.has(old) {
		return nil
	}
	set.add(old)
	oldEntries, err := readTree(r, old)
	if err != nil {
		return err
	}
	curByName := map[string]rawEntry{}
	if !cur.IsZero() {
		curEntries, err := readTree(r, cur)
		if err != nil {
			return err
		}
		for _, e := range curEntries {
			curByName[e.name] = e
		}
	}
	for _, oe := range oldEntries {
		ce, ok := curByName[oe.name]
		if ok && ce.hash == oe.hash && ce.mode == oe.mode {
			continue
		}
		switch {
		case oe.isTree():
			next := plumbing.ZeroHash
			if ok && ce.isTree() {
				next = ce.hash
			}
			if err := addTreeDiff(r, set, oe.hash, next); err != nil {
				return err
			}
		case oe.isGitlink():
		default:
			if r.store.has(oe.hash) {
				set.add(oe.hash)
			}
		}
	}
	return nil
}

// readTree reads and parses one tree object.
func readTree(r *objectReader, h plumbing.Hash) ([]rawEntry, error) {
	t, data, err := r.readBytes(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, missing(err))
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("read tree %s: object is a %s", h, t)
	}
	return parseTree(h, data)
}

// packBuilder writes one pack, and its index, from objects added by
// several goroutines: each compresses with its own packCompressor, and
// only the append is serialised. Objects are stored whole (no deltas): the
// pack is written once and read a few times. The object count in the
// header and the trailing checksum are filled in by finish.
type packBuilder struct {
	dir string
	f   *os.File

	mu   sync.Mutex
	w    *bufio.Writer
	off  int64
	seen map[plumbing.Hash]bool
	idx  idxfile.Writer
	n    uint32
	err  error
}

// packCompressor is one goroutine's compression state.
type packCompressor struct {
	zw  *zlib.Writer
	buf bytes.Buffer
	crc hash.Hash32
}

// Huffman-only compression: about twice as fast as BestSpeed in Go's
// compress/flate, for a pack somewhat larger; the pack is written on every
// checkout and read by a few git commands.
func newPackCompressor() *packCompressor {
	zw, _ := zlib.NewWriterLevel(nil, zlib.HuffmanOnly)
	return &packCompressor{zw: zw, crc: crc32.NewIEEE()}
}

func newPackBuilder(packDir string) (*packBuilder, error) {
	f, err := os.CreateTemp(packDir, "tmp_pack_")
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	b := &packBuilder{dir: packDir, f: f, w: bufio.NewWriterSize(f, 1<<20), seen: map[plumbing.Hash]bool{}}
	// The header's object count is known only at the end: write a
	// placeholder now, the real header in finish.
	n, err := b.w.Write(make([]byte, 12))
	b.off, b.err = int64(n), err
	return b, nil
}

// claim reports whether h is new to the pack, and reserves it.
func (b *packBuilder) claim(h plumbing.Hash) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[h] {
		return false
	}
	b.seen[h] = true
	return true
}

// add compresses an object with z and appends it.
func (b *packBuilder) add(z *packCompressor, h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	z.buf.Reset()
	z.buf.Write(packObjectHeader(t, int64(len(data))))
	z.zw.Reset(&z.buf)
	if _, err := z.zw.Write(data); err != nil {
		return fmt.Errorf("compress object: %w", err)
	}
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("compress object: %w", err)
	}
	z.crc.Reset()
	z.crc.Write(z.buf.Bytes())

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	b.idx.Add(h, uint64(b.off), z.crc.Sum32())
	n, err := b.w.Write(z.buf.Bytes())
	b.off += int64(n)
	b.n++
	if err != nil {
		b.err = fmt.Errorf("write pack: %w", err)
	}
	return b.err
}

// abort removes the unfinished pack.
func (b *packBuilder) abort() {
	b.f.Close()
	os.Remove(b.f.Name())
}

// finish writes the header's object count and the trailing checksum,
// then the index, and gives both their final names, pack-<checksum>.
func (b *packBuilder) finish() (err error) {
	defer func() {
		if err != nil {
			b.abort()
		}
	}()
	if b.err != nil {
		return b.err
	}
	if err := b.w.Flush(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	var hdr [12]byte
	copy(hdr[:4], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], b.n)
	if _, err := b.f.WriteAt(hdr[:], 0); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	sum := sha1.New()
	if _, err := io.Copy(sum, io.NewSectionReader(b.f, 0, b.off)); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	var packSum plumbing.Hash
	copy(packSum[:], sum.Sum(nil))
	if _, err := b.f.WriteAt(packSum[:], b.off); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := b.f.Close(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if err := b.idx.OnFooter(packSum); err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	mi, err := b.idx.Index()
	if err != nil {
		return fmt.Errorf("index pack: %w", err)
	}
	base := filepath.Join(b.dir, "pack-"+packSum.String())
	f, err := os.Create(base + ".idx")
	if err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	w := bufio.NewWriter(f)
	_, err = idxfile.NewEncoder(w).Encode(mi)
	if err = errors.Join(err, w.Flush(), f.Close()); err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	if err := os.Rename(b.f.Name(), base+".pack"); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}

// packObjectHeader encodes an undeltified object's type and size as the
// pack format does: type in bits 4-6 of the first byte, size in 4 bits
// then 7 bits per byte, little end first.
func packObjectHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}
