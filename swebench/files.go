package swebench

import (
	"fmt"
	"io"
	"sync"

	"github.com/swebox/swebox/internal/atomicfile"
	"github.com/swebox/swebox/sandbox"
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
// head goes straight to disk, and past it a sandbox.OutputBuffer of
// limit/restShare bytes keeps the first and last bytes of the rest in
// memory, appended at Close with a line between them saying how many bytes
// were dropped. A test that prints gigabytes costs neither disk nor memory,
// and the summary at the end of a pytest log survives. The file shows at
// its path only once Close has written all of it: a crash leaves no
// partial log for a regrade to trust.
type cappedFile struct {
	mu       sync.Mutex
	f        pendingFile
	headLeft int64
	rest     *sandbox.OutputBuffer // nil when the limit leaves no room past the head
	dropped  int64                 // bytes dropped without rest
	err      error
}

// restShare is the part of the limit kept in memory past the head, half of
// it from the end of the stream.
const restShare = 4

func newCappedFile(path string, limit int64) (*cappedFile, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	return newCapped(f, limit), nil
}

func newCapped(f pendingFile, limit int64) *cappedFile {
	restSize := limit / restShare
	c := &cappedFile{f: f, headLeft: limit - restSize}
	if restSize > 0 {
		c.rest = sandbox.NewOutputBuffer(int(restSize))
	}
	return c
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
	switch {
	case len(p) == 0:
	case c.rest != nil:
		_, _ = c.rest.Write(p)
	default:
		c.dropped += int64(len(p))
	}
	return n, nil
}

// Close writes what was kept past the head and commits the file. Any
// failed write, of the head, the drop note or the tail (a full disk), is
// returned, and then nothing shows at the path: a log missing its end
// (where pytest's summary is) must not be graded.
func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return c.err
	}
	var rest sandbox.Output
	if c.rest != nil {
		rest = c.rest.Output()
	}
	c.write(rest.Head)
	if dropped := c.dropped + rest.Dropped; dropped > 0 {
		c.write([]byte(fmt.Sprintf("\n[swebox: %d bytes of output dropped here]\n", dropped)))
	}
	c.write(rest.Tail)
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
