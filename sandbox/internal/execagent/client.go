package execagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ErrLost: the connection to the agent ended before the command's result.
var ErrLost = errors.New("exec agent connection lost")

// Grace periods of the host side. The agent kills a timed-out command
// itself; the host only steps in when the agent does not answer.
const (
	// hostTimeoutGrace is how long past the command's timeout the host waits
	// before it sends Kill itself.
	hostTimeoutGrace = 5 * time.Second
	// killAnswerWait is how long the host waits for the result after Kill:
	// the agent's kill budget and output grace, with room to spare.
	killAnswerWait = 15 * time.Second
)

// Call is one command for [Run].
type Call struct {
	Req            StartRequest
	Stdin          io.Reader // nil: no stdin
	Stdout, Stderr io.Writer // receive the streams; must not be nil
}

// Run runs c on an agent connection and returns its result. When ctx ends
// first the agent is told to kill the command and its result (TimedOut) is
// still returned, with a nil error: the caller tells a cancellation by
// ctx.Err(). conn is closed when Run returns. A result that never comes (the
// agent died or stopped answering) is an [ErrLost] error.
func Run(ctx context.Context, conn net.Conn, c Call) (Result, error) {
	defer conn.Close()
	c.Req.Version = Version
	c.Req.Stdin = c.Stdin != nil
	var wmu sync.Mutex
	send := func(typ byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return WriteFrame(conn, typ, p)
	}
	start, err := json.Marshal(c.Req)
	if err != nil {
		return Result{}, err
	}
	if err := send(FrameStart, start); err != nil {
		return Result{}, fmt.Errorf("%w: send start: %w", ErrLost, err)
	}
	if c.Stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Stdin.Read(buf)
				if n > 0 && send(FrameStdin, buf[:n]) != nil {
					return
				}
				if err != nil {
					_ = send(FrameStdinEOF, nil)
					return
				}
			}
		}()
	}

	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var buf []byte
		for {
			typ, payload, err := ReadFrame(conn, buf)
			if err != nil {
				done <- outcome{err: fmt.Errorf("%w: %w", ErrLost, err)}
				return
			}
			buf = payload[:0]
			switch typ {
			case FrameStdout:
				_, _ = c.Stdout.Write(payload)
			case FrameStderr:
				_, _ = c.Stderr.Write(payload)
			case FrameExit:
				var r Result
				if err := json.Unmarshal(payload, &r); err != nil {
					done <- outcome{err: fmt.Errorf("%w: bad result: %w", ErrProtocol, err)}
					return
				}
				done <- outcome{res: r}
				return
			default:
				done <- outcome{err: fmt.Errorf("%w: unexpected frame %q", ErrProtocol, typ)}
				return
			}
		}
	}()

	var hostDeadline <-chan time.Time
	if c.Req.TimeoutNS > 0 {
		t := time.NewTimer(time.Duration(c.Req.TimeoutNS) + hostTimeoutGrace)
		defer t.Stop()
		hostDeadline = t.C
	}
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
	case <-hostDeadline:
	}
	_ = send(FrameKill, nil)
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(killAnswerWait):
		_ = conn.Close()
		return Result{}, fmt.Errorf("%w: no result %v after kill", ErrLost, killAnswerWait)
	}
}
