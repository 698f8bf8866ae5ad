package sandbox

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// Output is what was kept of one stream of a command: when the stream was
// longer than the cap, its first and last halves, and the count of bytes
// dropped between them.
type Output struct {
	Head      []byte // the first bytes, up to half the cap (the whole stream when not truncated)
	Tail      []byte // the last bytes when truncated
	Truncated bool
	Dropped   int64 // bytes dropped between Head and Tail
	Total     int64 // bytes the command wrote to the stream
}

// Bytes returns Head followed by Tail, without a marker between them.
func (o Output) Bytes() []byte {
	if len(o.Tail) == 0 {
		return o.Head
	}
	b := make([]byte, 0, len(o.Head)+len(o.Tail))
	return append(append(b, o.Head...), o.Tail...)
}

// String returns the kept output; when bytes were dropped a marker line
// between head and tail says how many.
func (o Output) String() string {
	if !o.Truncated {
		return string(o.Head)
	}
	return fmt.Sprintf("%s\n[... %d bytes dropped ...]\n%s", o.Head, o.Dropped, o.Tail)
}

// capBuffer is an io.Writer that keeps at most limit bytes: the first
// limit/2 and a ring of the last limit-limit/2. Memory stays bounded however
// much is written.
type capBuffer struct {
	mu    sync.Mutex
	limit int
	head  []byte
	ring  []byte // tail ring buffer, allocated when head is full
	pos   int    // next write position in ring
	full  bool   // ring has wrapped
	total int64
}

// outputSplit is how a cap of limit bytes (<= 0: DefaultOutputLimit) is
// shared between the head and the tail of what is kept.
func outputSplit(limit int) (head, tail int) {
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	return limit / 2, limit - limit/2
}

// ReadOutput keeps of the size bytes at r (a file) what a command's output
// of that length keeps with limit (<= 0: DefaultOutputLimit): all of it
// when it fits, else its first and last bytes, read where they lie, so that
// the middle is never read. A source that shrank meanwhile gives fewer.
func ReadOutput(r io.ReaderAt, size int64, limit int) (Output, error) {
	head, tail := outputSplit(limit)
	if size <= int64(head+tail) {
		b, err := readAt(r, 0, int(size))
		return Output{Head: b, Total: int64(len(b))}, err
	}
	h, err := readAt(r, 0, head)
	if err != nil {
		return Output{}, err
	}
	t, err := readAt(r, size-int64(tail), tail)
	if err != nil {
		return Output{}, err
	}
	return Output{Head: h, Tail: t, Truncated: true, Dropped: size - int64(len(h)+len(t)), Total: size}, nil
}

// readAt reads up to n bytes at off; a file that shrank since its size was
// taken gives fewer.
func readAt(r io.ReaderAt, off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	k, err := r.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b[:k], err
}

func newCapBuffer(limit int) *capBuffer {
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	return &capBuffer{limit: limit}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	headCap, tailCap := outputSplit(b.limit)
	if len(b.head) < headCap {
		k := min(headCap-len(b.head), len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.ring == nil {
		b.ring = make([]byte, tailCap)
	}
	if len(p) >= tailCap {
		copy(b.ring, p[len(p)-tailCap:])
		b.pos, b.full = 0, true
		return n, nil
	}
	k := copy(b.ring[b.pos:], p)
	if k < len(p) {
		copy(b.ring, p[k:])
		b.full = true
	}
	b.pos = (b.pos + len(p)) % tailCap
	if b.pos == 0 {
		b.full = true
	}
	return n, nil
}

// Output returns what was kept. Bytes that fit in the cap are never marked
// truncated.
func (b *capBuffer) Output() Output {
	b.mu.Lock()
	defer b.mu.Unlock()
	var tail []byte
	if b.full {
		tail = append(append(tail, b.ring[b.pos:]...), b.ring[:b.pos]...)
	} else if b.ring != nil {
		tail = append(tail, b.ring[:b.pos]...)
	}
	kept := int64(len(b.head) + len(tail))
	if kept == b.total {
		// Everything fits: one contiguous Head.
		return Output{Head: append(append([]byte{}, b.head...), tail...), Total: b.total}
	}
	return Output{
		Head: append([]byte{}, b.head...), Tail: tail,
		Truncated: true, Dropped: b.total - kept, Total: b.total,
	}
}

// lenientWriter forwards to w and forgets it after its first error, so a
// failing live stream never stops output collection.
type lenientWriter struct {
	w   io.Writer
	err error
}

func (l *lenientWriter) Write(p []byte) (int, error) {
	if l.w != nil && l.err == nil {
		if _, err := l.w.Write(p); err != nil {
			l.err = err
		}
	}
	return len(p), nil
}

// streamWriter returns the writer a command's stream is copied to: the cap
// buffer, plus live when given.
func streamWriter(buf *capBuffer, live io.Writer) io.Writer {
	if live == nil {
		return buf
	}
	return io.MultiWriter(buf, &lenientWriter{w: live})
}

// OutputBuffer is an io.Writer that keeps a stream the way a command's
// result does: at most limit bytes, head and tail. It is safe for
// concurrent use, so a caller can pass it as ExecRequest.Stdout and read
// the output so far while the command runs.
type OutputBuffer struct{ b *capBuffer }

// NewOutputBuffer returns a buffer keeping at most limit bytes (limit <= 0:
// DefaultOutputLimit).
func NewOutputBuffer(limit int) *OutputBuffer { return &OutputBuffer{b: newCapBuffer(limit)} }

// Write keeps what fits of p; it never fails.
func (o *OutputBuffer) Write(p []byte) (int, error) { return o.b.Write(p) }

// Output returns what was kept so far.
func (o *OutputBuffer) Output() Output { return o.b.Output() }
