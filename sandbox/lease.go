package sandbox

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/swebox/swebox/sandbox/internal/seam"
)

// A sandbox lives no longer than the process that created it. On the Docker
// engine the client holds a lease on each sandbox: an attach to the main
// process's standard streams, opened before the sandbox starts and held
// until it is removed. When the process ends, however it ends (Remove, a
// return without Close, log.Fatal, kill -9), the kernel closes the
// connection, the engine closes the main process's input (StdinOnce), and
// the main process (leasedKeepalive, or the agent under agentKeepalive) ends
// at that EOF, which stops the sandbox within a second. Nothing the
// sandbox's user can do keeps the lease open: the write end is the host's
// connection.
//
// A leased sandbox is created with AutoRemove, so the engine then removes
// it, with its anonymous volumes: nothing stays behind, with no other
// program running. What an ErrNotRunning error says of a sandbox that
// stopped while its client lives (the main process's exit status and last
// words) the lease keeps (mainRecord), since the engine forgets it with the
// container. What a dead owner left that the engine does not remove (a
// sandbox created but never started, a one-shot Run's container) the next
// client on the machine removes (reapOrphans).

// leaser is implemented by backends that can tie a sandbox's life to the
// client's connection.
type leaser interface {
	// StartLeased starts a sandbox created with createRequest.Stdin and
	// Leased and holds its main process's input open until release is
	// called or the process ends.
	StartLeased(ctx context.Context, id string) (release func(), err error)
}

// leasedKeepalive is keepalive for a leased sandbox (seam.LeasedKeepalive).
var leasedKeepalive = seam.LeasedKeepalive

// leasedMain returns the main process of a leased sandbox for cmd, the one
// agentFor chose.
func leasedMain(cmd []string) []string {
	if len(cmd) == len(agentKeepalive) && cmd[2] == agentKeepalive[2] {
		return agentLeasedKeepalive
	}
	return leasedKeepalive
}

// mainRecordLimit caps the main process's output a lease keeps per stream.
const mainRecordLimit = 8 << 10

// mainRecord is what a lease learns of its sandbox's main process: how it
// ended and the end of what it wrote, for inspect and logs once the engine
// has removed the container.
type mainRecord struct {
	done           chan struct{} // closed when st is final
	stdout, stderr *capBuffer
	st             State
	known          bool // st holds the main process's end
}

func (d *dockerBackend) StartLeased(ctx context.Context, id string) (func(), error) {
	hj, err := d.api.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach container: %w", d.attachErr(ctx, id, err))
	}
	// Wait before starting, so that an exit right after the start is seen.
	waitCtx, stopWait := context.WithCancel(context.WithoutCancel(ctx))
	waitC, waitErrC := d.api.ContainerWait(waitCtx, id, container.WaitConditionNextExit)
	if err := d.api.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		stopWait()
		hj.Close()
		return nil, dockerErr(err)
	}
	rec := &mainRecord{done: make(chan struct{}), stdout: newCapBuffer(mainRecordLimit), stderr: newCapBuffer(mainRecordLimit)}
	d.records.Store(id, rec)
	// The lease never writes: the main process's input stays open until
	// the connection closes.
	copied := pump(hj, stdio{Stdout: rec.stdout, Stderr: rec.stderr})
	go func() {
		defer close(rec.done)
		select {
		case w := <-waitC:
			rec.st = State{ExitCode: int(w.StatusCode)}
			// The engine forgets whether the OOM killer struck once it
			// has removed the container, which it begins at once: asked
			// right away, it usually still answers.
			ictx, cancel := context.WithTimeout(waitCtx, 5*time.Second)
			if info, err := d.api.ContainerInspect(ictx, id); err == nil && info.State != nil {
				rec.st.OOMKilled = info.State.OOMKilled
			}
			cancel()
			select {
			case <-copied:
			case <-time.After(time.Second):
			}
			rec.known = true
		case <-waitErrC:
		}
	}()
	return sync.OnceFunc(func() { stopWait(); hj.Close() }), nil
}

// ended returns what the lease of the sandbox id learnt of its main
// process's end, waiting for it while ctx lasts; ok is false when the
// client holds no lease on id or did not see the end.
func (d *dockerBackend) ended(ctx context.Context, id string) (*mainRecord, bool) {
	v, ok := d.records.Load(id)
	if !ok {
		return nil, false
	}
	rec := v.(*mainRecord)
	select {
	case <-rec.done:
		return rec, rec.known
	case <-ctx.Done():
		return nil, false
	}
}

// writeTail writes the last lines of o to w: all of them for tail "" or
// "all", else the number tail says.
func writeTail(w io.Writer, o Output, tail string) error {
	s := string(o.Bytes())
	if n, err := strconv.Atoi(tail); err == nil && n >= 0 {
		s = strings.TrimSuffix(s, "\n")
		lines := strings.Split(s, "\n")
		if n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		s = strings.Join(lines, "\n")
		if s != "" {
			s += "\n"
		}
	}
	_, err := io.WriteString(w, s)
	return err
}
