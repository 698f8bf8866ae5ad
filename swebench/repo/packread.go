package repo

import (
	"container/list"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// packStream reads a pack file forward from an offset through ReadAt, in
// chunks sized to the object being read, so that a small object costs one
// pread and no more. It implements io.ByteReader, which keeps
// compress/flate from wrapping it in a bufio.Reader of its own.
type packStream struct {
	f     *os.File
	off   int64 // file offset of the byte after buf
	buf   []byte
	r     int // read position in buf
	chunk int
}

const (
	minChunk = 4 << 10
	maxChunk = 1 << 20
)

func (s *packStream) reset(f *os.File, off int64) {
	s.f, s.off, s.buf, s.r, s.chunk = f, off, s.buf[:0], 0, minChunk
}

// expect sizes the next reads for an object of about size bytes (its
// compressed form is rarely larger than that plus a few bytes).
func (s *packStream) expect(size int64) {
	s.chunk = int(min(max(size+64, minChunk), maxChunk))
}

func (s *packStream) fill() error {
	if cap(s.buf) < s.chunk {
		s.buf = make([]byte, s.chunk)
	}
	s.buf = s.buf[:s.chunk]
	n, err := s.f.ReadAt(s.buf, s.off)
	s.buf, s.r = s.buf[:n], 0
	s.off += int64(n)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (s *packStream) Read(p []byte) (int, error) {
	if s.r == len(s.buf) {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.buf[s.r:])
	s.r += n
	return n, nil
}

func (s *packStream) ReadByte() (byte, error) {
	if s.r == len(s.buf) {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	b := s.buf[s.r]
	s.r++
	return b, nil
}

// objectHeader reads a pack entry's type and inflated size: type in bits
// 4-6 of the first byte, size in its low 4 bits then 7 bits per byte.
func (s *packStream) objectHeader() (plumbing.ObjectType, int64, error) {
	c, err := s.ReadByte()
	if err != nil {
		return plumbing.InvalidObject, 0, err
	}
	t := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return plumbing.InvalidObject, 0, errors.New("object size overflows")
		}
		if c, err = s.ReadByte(); err != nil {
			return plumbing.InvalidObject, 0, err
		}
		size |= int64(c&0x7f) << shift
	}
	return t, size, nil
}

// ofsDeltaOffset reads the distance back to an OFS_DELTA's base, in git's
// offset encoding (each continuation adds one before shifting).
func (s *packStream) ofsDeltaOffset() (int64, error) {
	c, err := s.ReadByte()
	if err != nil {
		return 0, err
	}
	off := int64(c & 0x7f)
	for c&0x80 != 0 {
		if off > 1<<55 {
			return 0, errors.New("delta offset overflows")
		}
		if c, err = s.ReadByte(); err != nil {
			return 0, err
		}
		off = (off+1)<<7 | int64(c&0x7f)
	}
	return off, nil
}

// baseKey names a packed object by position.
type baseKey struct {
	pack   int
	offset int64
}

// baseCache keeps delta bases, least recently used out first, within a
// byte budget. It is safe for concurrent use. Its slices are shared and
// must not be modified.
type baseCache struct {
	mu    sync.Mutex
	limit int64
	size  int64
	ll    *list.List
	items map[baseKey]*list.Element
}

type baseEntry struct {
	key  baseKey
	typ  plumbing.ObjectType
	data []byte
}

func newBaseCache(limit int64) *baseCache {
	return &baseCache{limit: limit, ll: list.New(), items: map[baseKey]*list.Element{}}
}

func (c *baseCache) get(k baseKey) (plumbing.ObjectType, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return plumbing.InvalidObject, nil, false
	}
	c.ll.MoveToFront(el)
	e := el.Value.(*baseEntry)
	return e.typ, e.data, true
}

func (c *baseCache) put(k baseKey, t plumbing.ObjectType, data []byte) {
	if int64(len(data)) > c.limit/4 {
		return // one huge base would flush everything else
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.items[k] = c.ll.PushFront(&baseEntry{key: k, typ: t, data: data})
	c.size += int64(len(data))
	for c.size > c.limit {
		el := c.ll.Back()
		e := el.Value.(*baseEntry)
		c.ll.Remove(el)
		delete(c.items, e.key)
		c.size -= int64(len(e.data))
	}
}
