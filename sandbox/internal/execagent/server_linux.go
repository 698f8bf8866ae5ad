package execagent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ShimArg is the argument that makes the agent binary act as a command's
// shim (see [Shim]).
const ShimArg = "shim"

// shim control frames, on the socket pair at the shim's fd 3.
const (
	frameShimCommand byte = 'c' // agent: JSON shimCommand, with its stdio as SCM_RIGHTS
	frameShimRelease byte = 'r' // agent: done with the command's processes
	frameShimStatus  byte = 's' // shim: JSON shimExit, the first process ended or did not start
	frameShimUsage   byte = 'u' // shim: JSON shimUsage, the command's processes' usage
)

type shimExit struct {
	Code       int    `json:"code"`
	Signal     int    `json:"signal,omitempty"`
	StartError string `json:"start_error,omitempty"`
	// Error: the shim could not start the command for want of a resource
	// (a process slot, memory); Code is then meaningless.
	Error string `json:"error,omitempty"`
}

type shimUsage struct {
	MaxRSSKB int64 `json:"max_rss_kb"`
	UserNS   int64 `json:"user_ns"`
	SysNS    int64 `json:"sys_ns"`
	// Reusable: no process of the command is left, so the shim can take
	// the next command; otherwise it exits.
	Reusable bool `json:"reusable,omitempty"`
}

// Grace periods for output after the first process of a command ended:
// a background process may hold the streams open.
const (
	exitGrace = 200 * time.Millisecond
	killGrace = time.Second
	// startReadTimeout bounds how long a new connection may take to send
	// its StartRequest.
	startReadTimeout = 10 * time.Second
)

// Server runs commands for connections on a listener.
type Server struct {
	// Self is the agent binary, re-executed as each command's shim.
	Self string
	// Token, when set, is what the first frame (FrameAuth) of every
	// connection must carry; a connection without it is closed unanswered.
	Token []byte
	// OOMFiles are read for the memory cgroup's oom_kill counter, first
	// readable wins. Default: cgroup v1 memory.oom_control, v2 memory.events.
	OOMFiles []string

	idleOnce sync.Once
	idle     chan *shimProc // shims waiting for a command
}

// Serve accepts connections until ln fails.
func (s *Server) Serve(ln net.Listener) error {
	if len(s.OOMFiles) == 0 {
		s.OOMFiles = []string{"/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"}
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		go s.handle(conn)
	}
}

// connWriter serialises frames from the output copiers and the final Exit.
type connWriter struct {
	mu   sync.Mutex
	conn net.Conn
	err  error
}

func (w *connWriter) frame(typ byte, p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = WriteFrame(w.conn, typ, p)
	}
	return w.err
}

func (s *Server) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(startReadTimeout))
	if len(s.Token) > 0 {
		typ, payload, err := ReadFrame(conn, nil)
		if err != nil || typ != FrameAuth || subtle.ConstantTimeCompare(payload, s.Token) != 1 {
			return
		}
	}
	typ, payload, err := ReadFrame(conn, nil)
	if err != nil || typ != FrameStart {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	var req StartRequest
	w := &connWriter{conn: conn}
	if err := json.Unmarshal(payload, &req); err != nil || req.Version != Version || len(req.Argv) == 0 {
		_ = WriteJSON(conn, FrameExit, Result{ExitCode: 126, StartError: fmt.Sprintf("bad start request (version %d, %d args): %v", req.Version, len(req.Argv), err)})
		return
	}
	res := s.run(conn, w, req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_ = WriteJSON(conn, FrameExit, res)
	}
}

// mergeEnv returns base with extra's variables set, replacing same names.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	idx := make(map[string]int, len(base))
	out := append([]string(nil), base...)
	for i, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		idx[k] = i
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// run starts req under a shim and streams its output on w until it ends.
func (s *Server) run(conn net.Conn, w *connWriter, req StartRequest) Result {
	oomBefore := s.oomKills()
	p, c, err := s.startCommand(req)
	var se *startError
	switch {
	case errors.As(err, &se):
		return Result{ExitCode: 126, StartError: se.msg}
	case err != nil:
		return Result{ExitCode: -1, Error: "start the command: " + err.Error()}
	}
	defer c.close()

	copied := make(chan struct{}, 2)
	go copyFrames(w, FrameStdout, c.stdout, copied)
	go copyFrames(w, FrameStderr, c.stderr, copied)
	hostGone := make(chan struct{})
	go readHost(conn, c.stdin, hostGone)

	var timeout <-chan time.Time
	if req.TimeoutNS > 0 {
		t := time.NewTimer(time.Duration(req.TimeoutNS))
		defer t.Stop()
		timeout = t.C
	}
	res := Result{}
	type status struct {
		st shimExit
		ok bool
	}
	statusC := make(chan status, 1)
	go func() {
		var st shimExit
		ok := p.next(frameShimStatus, 1<<62, &st)
		statusC <- status{st, ok}
	}()
	var got status
	select {
	case got = <-statusC:
	case <-timeout:
		res.TimedOut = true
	case <-hostGone:
		res.TimedOut = true
	}
	var killErr error
	if res.TimedOut {
		killErr = killTree(p.pid, 5*time.Second)
		select {
		case got = <-statusC:
		case <-time.After(killGrace):
		}
	}
	st, gotStatus := got.st, got.ok
	res.WallNS = int64(time.Since(c.start))
	res.ExitCode, res.Signal, res.StartError, res.Error = st.Code, st.Signal, st.StartError, st.Error
	if !gotStatus {
		res.ExitCode, res.Signal, res.StartError = -1, 0, ""
		res.Error = errShimGone.Error()
		if st := p.exitStatus(); st != "" {
			res.Error += " (" + st + ")"
		}
	}
	switch {
	case killErr != nil:
		res.KillError = killErr.Error()
	case !gotStatus:
		res.KillError = errShimGone.Error()
	}

	// Release the shim: it reports the usage of the command's processes
	// and whether any is left.
	var usage shimUsage
	released := gotStatus && WriteFrame(p.ctrl, frameShimRelease, nil) == nil && p.next(frameShimUsage, 5*time.Second, &usage)
	s.putShim(p, released && usage.Reusable && res.KillError == "")
	res.MaxRSSKB, res.UserNS, res.SysNS = usage.MaxRSSKB, usage.UserNS, usage.SysNS

	grace := exitGrace
	if res.TimedOut {
		grace = killGrace
	}
	deadline := time.After(grace)
	for n := 0; n < 2; n++ {
		select {
		case <-copied:
		case <-deadline:
			n = 2
		}
	}
	if res.Signal == int(syscall.SIGKILL) && !res.TimedOut {
		if after := s.oomKills(); after > oomBefore && oomBefore >= 0 {
			res.OOMKilled = true
		}
	}
	return res
}

// copyFrames sends r's bytes as frames of typ until r ends.
func copyFrames(w *connWriter, typ byte, r io.Reader, done chan<- struct{}) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if w.frame(typ, buf[:n]) != nil {
				// The host is gone: keep draining so the command is not
				// blocked on a full pipe while it is being killed.
				_, _ = io.Copy(io.Discard, r)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readHost copies stdin frames into stdin (nil when the command has none)
// and closes gone when the host sends Kill or hangs up.
func readHost(conn net.Conn, stdin *os.File, gone chan<- struct{}) {
	defer close(gone)
	var buf []byte
	for {
		typ, payload, err := ReadFrame(conn, buf)
		if err != nil {
			return
		}
		buf = payload[:0]
		switch typ {
		case FrameStdin:
			if stdin != nil {
				if _, err := stdin.Write(payload); err != nil {
					_ = stdin.Close()
					stdin = nil
				}
			}
		case FrameStdinEOF:
			if stdin != nil {
				_ = stdin.Close()
				stdin = nil
			}
		case FrameKill:
			return
		default:
			return
		}
	}
}

// oomKills reads the memory cgroup's oom_kill counter, -1 when none is
// readable.
func (s *Server) oomKills() int64 {
	for _, f := range s.OOMFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var n int64
			if _, err := fmt.Sscanf(line, "oom_kill %d", &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// PrewarmThreads makes the Go runtime start n OS threads now and keep them
// idle. A fork bomb in the sandbox can take every process slot (threads
// count), and the runtime aborts when it cannot start a thread it needs;
// with threads in reserve the agent outlives the bomb and kills it.
//
// The n goroutines lock a thread each and wait until all of them hold one,
// so that n threads exist at once; unlocked again, the threads go back to
// the runtime's idle pool, which it never shrinks.
func PrewarmThreads(n int) {
	var locked, done sync.WaitGroup
	release := make(chan struct{})
	for range n {
		locked.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
}

// HoldThreads makes the Go runtime hold n OS threads in all (see
// PrewarmThreads): it prewarms more threads until the process has n. The
// runtime may have started some on its own already, as scheduling went;
// topping up to n makes the count the same every time.
func HoldThreads(n int) {
	for k := 1; k <= n; k++ {
		have, err := threads()
		if err != nil {
			// Without /proc, prewarm what the runtime does not start
			// itself: the monitor, the template thread and the main one.
			PrewarmThreads(n - 3)
			return
		}
		if have >= n {
			return
		}
		PrewarmThreads(k)
	}
}

// threads returns how many threads the process has.
func threads() (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("no Threads line in /proc/self/status")
}
