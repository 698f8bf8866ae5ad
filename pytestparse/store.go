package pytestparse

import (
	"bytes"
	"hash/maphash"
	"unsafe"
)

// The parser keeps one record per distinct node id. A log can hold millions,
// so the records hold no pointers: ids live in large byte chunks and are
// found through an open-addressing table of hashes. The garbage collector
// then has almost nothing to scan, and a lookup hashes the id once.

// rec is the pointer-free form of a Test while parsing.
type rec struct {
	chunk    uint32 // id bytes: store.chunks[chunk][off : off+n]
	off      uint32
	n        uint32
	outcome  Outcome
	reported OutcomeSet
	source   Source
	hasMsg   bool
	line     int
}

// Ids are copied into chunks that start small (most logs name a few hundred
// tests) and double up to maxChunk.
const (
	minChunk = 4 << 10
	maxChunk = 4 << 20
)

// Records are kept in blocks of recBlock, so that a million of them are
// never copied to grow: the first block grows as a slice does, the others
// are allocated whole.
const (
	recShift = 16
	recBlock = 1 << recShift
)

type store struct {
	blocks [][]rec
	n      int // records
	chunks [][]byte
	// msgs holds the messages of the few tests that have one.
	msgs map[int32]string
	seed maphash.Seed
	// The table: tags[j] is 0 for an empty slot, else 0x80 | 7 bits of the
	// id's hash; idxs[j] is the record. Probing mostly reads the small tag
	// array, which stays in cache better than the records.
	tags []uint8
	idxs []int32
	// hint is the record the next lookup tries first: the one after the
	// last match, which is the next line's test when the short test summary
	// lists tests in the order they ran.
	hint int32
}

func newStore() store { return store{seed: maphash.MakeSeed()} }

func (s *store) rec(i int32) *rec { return &s.blocks[i>>recShift][i&(recBlock-1)] }

func (s *store) len() int { return s.n }

func (s *store) appendRec(r rec) int32 {
	i := int32(s.n)
	if b := len(s.blocks); b == 0 || len(s.blocks[b-1]) == recBlock {
		c := 0
		if b > 0 {
			c = recBlock
		}
		s.blocks = append(s.blocks, make([]rec, 0, c))
	}
	last := &s.blocks[len(s.blocks)-1]
	*last = append(*last, r)
	s.n++
	return i
}

func (s *store) id(i int32) []byte {
	r := s.rec(i)
	return s.chunks[r.chunk][r.off : r.off+r.n : r.off+r.n]
}

// idString returns the id without copying it. Chunk bytes are never written
// again once an id is stored (a clone caps the last chunk), so the string
// stays immutable.
func (s *store) idString(i int32) string {
	b := s.id(i)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (s *store) hash(b []byte) uint64 { return maphash.Bytes(s.seed, b) }

func tagOf(h uint64) uint8 { return uint8(h>>57) | 0x80 }

// find returns the record of id.
func (s *store) find(id []byte) (int32, bool) {
	if h := s.hint; int(h) < s.n && bytes.Equal(s.id(h), id) {
		s.hint++
		return h, true
	}
	if len(s.tags) == 0 {
		return 0, false
	}
	h := s.hash(id)
	tag, mask := tagOf(h), uint64(len(s.tags)-1)
	for j := h & mask; s.tags[j] != 0; j = (j + 1) & mask {
		if s.tags[j] == tag {
			if i := s.idxs[j]; bytes.Equal(s.id(i), id) {
				s.hint = i + 1
				return i, true
			}
		}
	}
	return 0, false
}

// intern returns the record of id, adding an empty one if there is none.
func (s *store) intern(id []byte) int32 {
	if h := s.hint; int(h) < s.n && bytes.Equal(s.id(h), id) {
		s.hint++
		return h
	}
	if 2*(s.n+1) > len(s.tags) {
		s.grow()
	}
	h := s.hash(id)
	tag, mask := tagOf(h), uint64(len(s.tags)-1)
	j := h & mask
	for ; s.tags[j] != 0; j = (j + 1) & mask {
		if s.tags[j] == tag {
			if i := s.idxs[j]; bytes.Equal(s.id(i), id) {
				s.hint = i + 1
				return i
			}
		}
	}
	c, off := s.add(id)
	i := s.appendRec(rec{chunk: c, off: off, n: uint32(len(id))})
	s.tags[j], s.idxs[j] = tag, i
	s.hint = i + 1
	return i
}

// grow doubles the table, keeping the load under one half. Positions come
// from the hashes, so the ids are hashed again.
func (s *store) grow() {
	n := max(1024, 2*len(s.tags))
	s.tags = make([]uint8, n)
	s.idxs = make([]int32, n)
	mask := uint64(n - 1)
	for i := range s.n {
		h := s.hash(s.id(int32(i)))
		j := h & mask
		for s.tags[j] != 0 {
			j = (j + 1) & mask
		}
		s.tags[j], s.idxs[j] = tagOf(h), int32(i)
	}
}

// add copies an id into the chunks.
func (s *store) add(b []byte) (uint32, uint32) {
	n := len(s.chunks)
	if n == 0 || cap(s.chunks[n-1])-len(s.chunks[n-1]) < len(b) {
		size := minChunk
		if n > 0 {
			size = min(2*cap(s.chunks[n-1]), maxChunk)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, len(b))))
		n++
	}
	c := &s.chunks[n-1]
	off := len(*c)
	*c = append(*c, b...)
	return uint32(n - 1), uint32(off)
}

func (s *store) message(i int32) string {
	if !s.rec(i).hasMsg {
		return ""
	}
	return s.msgs[i]
}

func (s *store) setMessage(i int32, m string) {
	r := s.rec(i)
	had := r.hasMsg
	r.hasMsg = m != ""
	if m == "" {
		if had {
			delete(s.msgs, i)
		}
		return
	}
	if s.msgs == nil {
		s.msgs = make(map[int32]string)
	}
	s.msgs[i] = m
}

// clone copies the store; the last chunk is capped so that ids added to
// either copy never overwrite bytes the other may reference.
func (s *store) clone() store {
	c := *s
	c.blocks = make([][]rec, len(s.blocks))
	for i, b := range s.blocks {
		c.blocks[i] = append(make([]rec, 0, cap(b)), b...)
	}
	c.chunks = append([][]byte(nil), s.chunks...)
	if n := len(c.chunks); n > 0 {
		last := c.chunks[n-1]
		c.chunks[n-1] = last[:len(last):len(last)]
	}
	c.tags = append([]uint8(nil), s.tags...)
	c.idxs = append([]int32(nil), s.idxs...)
	c.msgs = make(map[int32]string, len(s.msgs))
	for k, v := range s.msgs {
		c.msgs[k] = v
	}
	return c
}
