package swebench

import (
	"fmt"
	"io"
	"sync"

	"github.com/swebox/swebox/internal/atomicfile"
)

// writeFileAtomic writes data to path so that a reader, or a rerun after a
// crash, sees the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}

// pendingFile is a file that shows at its path only once committed
// (*atomicfile.File).
type pendingFile interface {
	io.Writer
	Commit() error
	Abort()
}

// cappedFile writes a stream to a file, keeping at most limit bytes: the
// head goes straight to disk, and past it only the last tailSize bytes are
// kept in memory, appended at Close after a line saying how many bytes were
// dropped. A test that prints gigabytes costs neither disk nor memory, and
// the summary at the end of a pytest log survives. The file shows at its
// path only once Close has written all of it: a crash leaves no partial log
// for a regrade to trust.
type cappedFile struct {
	mu       sync.Mutex
	f        pendingFile
	headLeft int64
	tail     []byte
	tailPos  int
	tailFull bool
	dropped  int64
	err      error
}

// tailShare is the part of the limit kept from the end of the stream.
const tailShare = 8

func newCappedFile(path string, limit int64) (*cappedFile, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	return newCapped(f, limit), nil
}

func newCapped(f pendingFile, limit int64) *cappedFile {
	tailSize := limit / tailShare
	return &cappedFile{f: f, headLeft: limit - tailSize, tail: make([]byte, 0, tailSize)}
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if c.headLeft > 0 {
		k := min(int64(len(p)), c.headLeft)
		c.write(p[:k])
		c.headLeft -= k
		p = p[k:]
	}
	for len(p) > 0 && cap(c.tail) > 0 {
		if !c.tailFull && len(c.tail) < cap(c.tail) {
			k := min(len(p), cap(c.tail)-len(c.tail))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			if len(c.tail) == cap(c.tail) {
				c.tailFull = true
			}
			continue
		}
		k := copy(c.tail[c.tailPos:], p)
		c.dropped += int64(k)
		c.tailPos = (c.tailPos + k) % len(c.tail)
		p = p[k:]
	}
	c.dropped += int64(len(p))
	return n, nil
}

// Close writes the kept tail and commits the file. Any failed write, of
// the head, the drop note or the tail (a full disk), is returned, and then
// nothing shows at the path: a log missing its end (where pytest's summary
// is) must not be graded.
func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return c.err
	}
	if c.dropped > 0 {
		c.write([]byte(fmt.Sprintf("\n[swebox: %d bytes of output dropped here]\n", c.dropped)))
	}
	if len(c.tail) > 0 {
		c.write(c.tail[c.tailPos:])
		c.write(c.tail[:c.tailPos])
	}
	if c.err != nil {
		c.f.Abort()
	} else {
		c.err = c.f.Commit()
	}
	c.f = nil
	return c.err
}

// Abort discards the file.
func (c *cappedFile) Abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f != nil {
		c.f.Abort()
		c.f = nil
	}
}

// write writes p, keeping the first error.
func (c *cappedFile) write(p []byte) {
	if _, err := c.f.Write(p); err != nil && c.err == nil {
		c.err = err
	}
}
