package sandbox

import (
	"errors"
	"io"
	"sync"
	"time"
)

// errCommandEnded closes a command's standard input once the command ended.
var errCommandEnded = errors.New("command ended")

// deadliner is a reader whose blocked Read a deadline interrupts: an
// *os.File pipe, a net.Conn.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// feedStdin returns the reader a backend copies to a command's standard
// input, fed from r by a goroutine of its own, and stop, to be called once
// the command has ended.
//
// stop closes the returned reader, so the backend's copy ends, and makes the
// goroutine stop reading r: it never reads r again, and a Read blocked in r
// at that moment is interrupted when r has a SetReadDeadline method (the
// deadline is cleared again afterwards); otherwise it is left to return on
// its own, the goroutine ends then, and what it read is dropped. r is never
// closed: it belongs to the caller.
func feedStdin(r io.Reader) (io.Reader, func()) {
	pr, pw := io.Pipe()
	f := &stdinFeed{done: make(chan struct{})}
	go f.copy(r, pw)
	stop := func() {
		pr.CloseWithError(errCommandEnded)
		f.stop(r)
	}
	return pr, stop
}

type stdinFeed struct {
	done chan struct{}

	mu       sync.Mutex
	stopped  bool
	exited   bool
	deadline bool // a deadline was set on the reader to interrupt a Read
}

func (f *stdinFeed) copy(r io.Reader, pw *io.PipeWriter) {
	defer f.exit(r)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		select {
		case <-f.done:
			return
		default:
		}
		if n > 0 {
			if _, werr := pw.Write(buf[:n]); werr != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			_ = pw.Close()
			return
		}
		if err != nil {
			pw.CloseWithError(err)
			return
		}
	}
}

func (f *stdinFeed) stop(r io.Reader) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	close(f.done)
	if d, ok := r.(deadliner); ok && !f.exited {
		f.deadline = d.SetReadDeadline(time.Now()) == nil
	}
}

func (f *stdinFeed) exit(r io.Reader) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exited = true
	if f.deadline {
		_ = r.(deadliner).SetReadDeadline(time.Time{})
	}
}
