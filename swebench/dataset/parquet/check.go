package parquet

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	pq "github.com/parquet-go/parquet-go"
)

// parquet-go v0.32.0 trusts the sizes a file declares: it allocates a
// page's compressed_page_size (up to 2 GiB) before reading it, and its
// Thrift decoder, reading a page header from the file, allocates every
// binary field's declared length (statistics, say) before reading it: a
// file of a few hundred bytes makes it allocate gigabytes.
// checkPages walks every page header of every column chunk first, without
// allocating what they declare, and refuses a file whose declared sizes do
// not fit where they are.

// maxPageExpansion bounds a page's uncompressed size by its compressed
// size: real data (text, ids, JSON-encoded lists) compresses 2 to 20 fold.
// maxPageValues bounds a page's declared value count, which parquet-go
// allocates for: 8 values per byte of the page (bit-packed levels and
// indices take a bit at least), plus a margin for what RLE runs compress
// (a page of nulls).
const (
	maxPageExpansion = 1024
	minPageBound     = 1 << 20
	minValuesBound   = 1 << 20
)

// checkPages checks the page headers of every column chunk of f.
func checkPages(r io.ReaderAt, size int64, f *pq.File) error {
	for i, rg := range f.Metadata().RowGroups {
		for j, cc := range rg.Columns {
			md := cc.MetaData
			start := md.DataPageOffset
			if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
				start = md.DictionaryPageOffset
			}
			end := start + md.TotalCompressedSize
			if start < 4 || md.TotalCompressedSize < 0 || end > size-8 || end < start {
				return fmt.Errorf("row group %d, column %d: chunk at %d of %d bytes lies outside the file (%d bytes)", i, j, start, md.TotalCompressedSize, size)
			}
			for pos := start; pos < end; {
				h, err := walkPageHeader(r, pos, end-pos)
				if err != nil {
					return fmt.Errorf("row group %d, column %d: page header at %d: %w", i, j, pos, err)
				}
				rest := end - pos - h.n
				switch {
				case int64(h.compressed) > rest:
					return fmt.Errorf("row group %d, column %d: page at %d declares compressed_page_size %d, more than the %d bytes left in its column chunk", i, j, pos, h.compressed, rest)
				case int64(h.uncompressed) > max(minPageBound, maxPageExpansion*int64(h.compressed)):
					return fmt.Errorf("row group %d, column %d: page at %d declares uncompressed_page_size %d for %d compressed bytes", i, j, pos, h.uncompressed, h.compressed)
				case h.values > minValuesBound+8*int64(h.uncompressed):
					return fmt.Errorf("row group %d, column %d: page at %d declares num_values %d for %d bytes", i, j, pos, h.values, h.uncompressed)
				}
				pos += h.n + int64(h.compressed)
			}
		}
	}
	return nil
}

type pageSizes struct {
	n                        int64 // bytes of the header
	compressed, uncompressed int32
	values                   int64 // the largest value or row count of its page headers
}

// walkPageHeader reads the PageHeader at off (at most limit bytes) and
// returns its sizes.
func walkPageHeader(r io.ReaderAt, off, limit int64) (pageSizes, error) {
	var h pageSizes
	seen := 0
	w := newThriftWalker(r, off, limit)
	err := w.structure(func(parent, id int16, v int64) {
		switch {
		case parent == 0 && id == 2:
			h.uncompressed, seen = int32(v), seen|1
		case parent == 0 && id == 3:
			h.compressed, seen = int32(v), seen|2
		// num_values of data_page_header (5), dictionary_page_header (7)
		// and data_page_header_v2 (8), whose num_rows is field 3.
		case (parent == 5 || parent == 7 || parent == 8) && id == 1, parent == 8 && id == 3:
			h.values = max(h.values, v)
		}
	})
	if err != nil {
		return h, err
	}
	if seen != 3 || h.compressed < 0 || h.uncompressed < 0 {
		return h, fmt.Errorf("no valid compressed_page_size and uncompressed_page_size")
	}
	h.n = w.n
	return h, nil
}

// thriftWalker reads a Thrift compact-protocol value without keeping it:
// binary fields are skipped, and every declared length and count is
// checked against the bytes left.
type thriftWalker struct {
	r     *bufio.Reader
	n     int64 // bytes read
	limit int64
	depth int
}

var errThriftEnd = errors.New("declares more bytes than there are")

func newThriftWalker(r io.ReaderAt, off, limit int64) *thriftWalker {
	return &thriftWalker{r: bufio.NewReaderSize(io.NewSectionReader(r, off, limit), 4096), limit: limit}
}

func (w *thriftWalker) byte() (byte, error) {
	b, err := w.r.ReadByte()
	if err != nil {
		return 0, errThriftEnd
	}
	w.n++
	return b, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := w.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("varint too long")
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(w.limit-w.n) {
		return fmt.Errorf("a length of %d %w", n, errThriftEnd)
	}
	k, err := w.r.Discard(int(n))
	w.n += int64(k)
	if err != nil {
		return errThriftEnd
	}
	return nil
}

// Compact protocol type ids.
const (
	tBoolTrue, tBoolFalse, tByte, tI16, tI32, tI64, tDouble, tBinary, tList, tSet, tMap, tStruct, tUUID = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
)

// structure walks a struct's fields to its stop field; int fields of the
// struct and of the structs in its fields are passed to visit, with the
// id of the field holding them (0 for the struct's own).
func (w *thriftWalker) structure(visit func(parent, id int16, v int64)) error {
	return w.fields(0, visit)
}

func (w *thriftWalker) fields(parent int16, visit func(parent, id int16, v int64)) error {
	if w.depth++; w.depth > 64 {
		return errors.New("nested too deep")
	}
	defer func() { w.depth-- }()
	var id int16
	for {
		b, err := w.byte()
		if err != nil {
			return err
		}
		typ := b & 0x0f
		if typ == 0 {
			return nil
		}
		if d := b >> 4; d != 0 {
			id += int16(d)
		} else {
			v, err := w.uvarint()
			if err != nil {
				return err
			}
			id = int16(int64(v>>1) ^ -int64(v&1))
		}
		if visit != nil && (typ == tI16 || typ == tI32 || typ == tI64) {
			v, err := w.uvarint()
			if err != nil {
				return err
			}
			visit(parent, id, int64(v>>1)^-int64(v&1))
			continue
		}
		if visit != nil && parent == 0 && typ == tStruct {
			if err := w.fields(id, visit); err != nil {
				return err
			}
			continue
		}
		if err := w.value(typ); err != nil {
			return err
		}
	}
}

func (w *thriftWalker) value(typ byte) error {
	switch typ {
	case tBoolTrue, tBoolFalse:
		return nil // in a struct the value is the type; in a list, value reads its byte
	case tByte:
		_, err := w.byte()
		return err
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		return w.skip(8)
	case tUUID:
		return w.skip(16)
	case tBinary:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tList, tSet:
		b, err := w.byte()
		if err != nil {
			return err
		}
		n, et := uint64(b>>4), b&0x0f
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes a byte at least.
		if n > uint64(w.limit-w.n) {
			return fmt.Errorf("a list of %d elements %w", n, errThriftEnd)
		}
		for range n {
			if et == tBoolTrue || et == tBoolFalse {
				if _, err := w.byte(); err != nil {
					return err
				}
				continue
			}
			if err := w.value(et); err != nil {
				return err
			}
		}
		return nil
	case tMap:
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		if n > uint64(w.limit-w.n) {
			return fmt.Errorf("a map of %d entries %w", n, errThriftEnd)
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		for range n {
			for _, t := range []byte{kv >> 4, kv & 0x0f} {
				if t == tBoolTrue || t == tBoolFalse {
					if _, err := w.byte(); err != nil {
						return err
					}
				} else if err := w.value(t); err != nil {
					return err
				}
			}
		}
		return nil
	case tStruct:
		return w.fields(0, nil)
	}
	return fmt.Errorf("unknown Thrift type %d", typ)
}
