package swebench

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader (or a rerun after a crash) sees the old
// file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if werr != nil || serr != nil || cerr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, firstErr(werr, serr, cerr))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// cappedFile writes a stream to a file, keeping at most limit bytes: the
// head goes straight to disk, and past it only the last tailSize bytes are
// kept in memory, appended at Close after a line saying how many bytes were
// dropped. A test that prints gigabytes costs neither disk nor memory, and
// the summary at the end of a pytest log survives.
type cappedFile struct {
	mu       sync.Mutex
	f        *os.File
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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	tailSize := limit / tailShare
	return &cappedFile{f: f, headLeft: limit - tailSize, tail: make([]byte, 0, tailSize)}, nil
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if c.headLeft > 0 {
		k := min(int64(len(p)), c.headLeft)
		if _, err := c.f.Write(p[:k]); err != nil && c.err == nil {
			c.err = err
		}
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

// Close writes the kept tail and closes the file.
func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return c.err
	}
	if c.dropped > 0 {
		fmt.Fprintf(c.f, "\n[swebox: %d bytes of output dropped here]\n", c.dropped)
	}
	if len(c.tail) > 0 {
		c.f.Write(c.tail[c.tailPos:])
		c.f.Write(c.tail[:c.tailPos])
	}
	err := c.f.Close()
	c.f = nil
	if c.err == nil {
		c.err = err
	}
	return c.err
}
