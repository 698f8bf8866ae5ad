package execagent

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// shimProc is a shim, seen from the agent. A shim runs one command at a
// time and is reused as long as no process of its last command is left.
type shimProc struct {
	pid    int
	ctrl   *os.File
	events chan shimEvent // status and usage frames; closed when the shim is gone
}

type shimEvent struct {
	typ     byte
	payload []byte
}

// cmdIO is the agent's side of one command's streams.
type cmdIO struct {
	start          time.Time
	stdin          *os.File // nil when the command has no stdin
	stdout, stderr *os.File
}

func (c *cmdIO) close() {
	for _, f := range []*os.File{c.stdin, c.stdout, c.stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// shimCommand is what the agent hands a shim: the command, with its
// standard streams as file descriptors passed alongside.
type shimCommand struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir,omitempty"`
}

// maxIdleShims bounds the shims kept for reuse. An idle shim holds its
// threads against the sandbox's process limit, whose allowance counts one
// shim (PidsAllowance), so one is kept.
const maxIdleShims = 1

// spawnShim starts the agent binary as a shim in a process group of its
// own; it waits on its control socket for commands.
func (s *Server) spawnShim() (*shimProc, error) {
	// Non-blocking, so that reading and writing it waits in Go's poller
	// rather than holding an OS thread (see prewarmThreads).
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ctrl := os.NewFile(uintptr(fds[0]), "shim-ctrl")
	child := os.NewFile(uintptr(fds[1]), "shim-ctrl-child")
	defer child.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		_ = ctrl.Close()
		return nil, err
	}
	defer null.Close()
	// The shim's own runtime needs one thread and no collector; its
	// environment is never passed on, commands get theirs explicitly.
	env := mergeEnv(os.Environ(), []string{"GOMAXPROCS=1", "GOGC=off"})
	pid, err := syscall.ForkExec(s.Self, []string{"swebox-shim", ShimArg}, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd(), child.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		_ = ctrl.Close()
		return nil, err
	}
	p := &shimProc{pid: pid, ctrl: ctrl, events: make(chan shimEvent, 2)}
	go p.readCtrl()
	return p, nil
}

// takeShim returns an idle shim, or a new one.
func (s *Server) takeShim() (*shimProc, error) {
	s.idleOnce.Do(func() { s.idle = make(chan *shimProc, maxIdleShims) })
	select {
	case p := <-s.idle:
		return p, nil
	default:
		return s.spawnShim()
	}
}

// putShim keeps a shim for the next command, or ends it.
func (s *Server) putShim(p *shimProc, reusable bool) {
	if reusable {
		select {
		case s.idle <- p:
			return
		default:
		}
	}
	p.retire()
}

// readCtrl delivers the shim's frames until it is gone.
func (p *shimProc) readCtrl() {
	defer close(p.events)
	for {
		typ, payload, err := ReadFrame(p.ctrl, nil)
		if err != nil {
			return
		}
		p.events <- shimEvent{typ, payload}
	}
}

// next waits up to wait for the shim's next frame of type typ; ok is false
// when the shim is gone or did not answer.
func (p *shimProc) next(typ byte, wait time.Duration, v any) (ok bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case ev, open := <-p.events:
			if !open {
				return false
			}
			if ev.typ == typ && json.Unmarshal(ev.payload, v) == nil {
				return true
			}
		case <-t.C:
			return false
		}
	}
}

// retire ends the shim and reaps it. A shim whose command left processes
// exits by itself when told; one that does not answer is killed.
func (p *shimProc) retire() {
	_ = p.ctrl.Close()
	// Polled rather than a blocking wait, which would hold an OS thread.
	deadline := time.Now().Add(5 * time.Second)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 50*time.Millisecond) {
		if pid, err := syscall.Wait4(p.pid, nil, syscall.WNOHANG, nil); pid == p.pid || err != nil {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour)
		}
		time.Sleep(delay)
	}
}

// startError: the command itself cannot start (as opposed to the agent
// failing to run it); msg is worded like the engine's message.
type startError struct{ msg string }

func (e *startError) Error() string { return e.msg }

// exitStatus describes how a shim that is gone ended, "" when it has not
// ended within a moment; it reaps the shim.
func (p *shimProc) exitStatus() string {
	for delay := 100 * time.Microsecond; delay < 200*time.Millisecond; delay *= 2 {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		switch {
		case err != nil:
			return ""
		case pid != p.pid:
			time.Sleep(delay)
		case ws.Signaled():
			return "shim killed by signal " + ws.Signal().String()
		default:
			return fmt.Sprintf("shim exited with status %d", ws.ExitStatus())
		}
	}
	return ""
}

// startCommand hands req's command to a shim, with pipes for its streams.
func (s *Server) startCommand(req StartRequest) (*shimProc, *cmdIO, error) {
	if req.Dir != "" {
		// Worded like the engine's message, so that both transports
		// report the same.
		var errno error = syscall.ENOTDIR
		if fi, err := os.Stat(req.Dir); err != nil || !fi.IsDir() {
			var pe *os.PathError
			if errors.As(err, &pe) {
				errno = pe.Err
			}
			return nil, nil, &startError{fmt.Sprintf("chdir to cwd (%q) set in config.json failed: %v", req.Dir, errno)}
		}
	}
	payload, err := json.Marshal(shimCommand{Argv: req.Argv, Env: mergeEnv(os.Environ(), req.Env), Dir: req.Dir})
	if err != nil {
		return nil, nil, err
	}
	if len(payload) > MaxPayload {
		return nil, nil, fmt.Errorf("%w: command of %d bytes", ErrProtocol, len(payload))
	}
	var childFiles []*os.File
	defer func() {
		for _, f := range childFiles {
			_ = f.Close()
		}
	}()
	c := &cmdIO{}
	fail := func(err error) (*shimProc, *cmdIO, error) {
		c.close()
		return nil, nil, err
	}
	var stdinChild *os.File
	if req.Stdin {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		stdinChild, c.stdin = r, w
	} else {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return fail(err)
		}
		stdinChild = f
	}
	childFiles = append(childFiles, stdinChild)
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	c.stdout = outR
	childFiles = append(childFiles, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	c.stderr = errR
	childFiles = append(childFiles, errW)

	frame := make([]byte, 5, 5+len(payload))
	frame[0] = frameShimCommand
	binary.BigEndian.PutUint32(frame[1:], uint32(len(payload)))
	frame = append(frame, payload...)
	rights := syscall.UnixRights(int(stdinChild.Fd()), int(outW.Fd()), int(errW.Fd()))
	for attempt := 0; ; attempt++ {
		p, err := s.takeShim()
		if err != nil {
			return fail(fmt.Errorf("start the command's shim: %w", err))
		}
		c.start = time.Now()
		err = sendWithRights(p.ctrl, frame, rights)
		if err == nil {
			return p, c, nil
		}
		p.retire()
		if attempt == 1 {
			// An idle shim may have died; a fresh one must take it.
			return fail(fmt.Errorf("hand the command to its shim: %w", err))
		}
	}
}

// sendWithRights writes b on a Unix socket with the file descriptors in
// rights attached to its first byte.
func sendWithRights(f *os.File, b, rights []byte) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = sc.Write(func(fd uintptr) bool {
		n, err := syscall.SendmsgN(int(fd), b, rights, nil, syscall.MSG_NOSIGNAL)
		if err == syscall.EAGAIN {
			return false // the poller waits for room, then calls again
		}
		if err != nil {
			serr = err
			return true
		}
		b = b[n:]
		rights = nil // sent with the first bytes
		return len(b) == 0
	})
	return errors.Join(err, serr)
}

// procInfo is what killTree needs of a process.
type procInfo struct {
	ppid  int
	state byte
}

// readProcs reads the parent and state of every process visible in /proc.
// It looks for no markers: only the parent links of the process tree.
func readProcs() (map[int]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	procs := make(map[int]procInfo, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // gone
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = procInfo{ppid: ppid, state: f[0][0]}
	}
	return procs, nil
}

// descendants returns the live (not zombie) descendants of root.
func descendants(procs map[int]procInfo, root int) []int {
	children := map[int][]int{}
	for pid, pi := range procs {
		children[pi.ppid] = append(children[pi.ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			queue = append(queue, c)
			if st := procs[c].state; st != 'Z' && st != 'X' && st != 'x' {
				out = append(out, c)
			}
		}
	}
	return out
}

// errShimGone: the shim died, so the command's tree can no longer be found.
var errShimGone = errors.New("the command's shim is gone, so its processes cannot be found")

// killTree kills every descendant of the shim. The shim is a child
// subreaper, so a process of the command that was orphaned (also one that
// called setsid) is still its descendant. Processes are stopped first, pass
// after pass, so that none can fork while the others are killed.
func killTree(shim int, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	var left []string
	for time.Now().Before(deadline) {
		procs, err := readProcs()
		if err != nil {
			return fmt.Errorf("read /proc: %w", err)
		}
		if pi, ok := procs[shim]; !ok || pi.ppid != os.Getpid() {
			return errShimGone
		}
		victims := descendants(procs, shim)
		if len(victims) == 0 {
			return nil
		}
		left = left[:0]
		for _, v := range victims {
			left = append(left, fmt.Sprintf("%d(%c)", v, procs[v].state))
		}
		seen := map[int]bool{}
		for pass := 0; pass < 50; pass++ {
			fresh := 0
			for _, v := range victims {
				if !seen[v] {
					seen[v] = true
					fresh++
					_ = syscall.Kill(v, syscall.SIGSTOP)
				}
			}
			if fresh == 0 {
				break
			}
			if procs, err = readProcs(); err != nil {
				return fmt.Errorf("read /proc: %w", err)
			}
			victims = descendants(procs, shim)
		}
		for v := range seen {
			_ = syscall.Kill(v, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("processes of the command remained after %v of killing: %s", budget, strings.Join(left[:min(len(left), 10)], " "))
}
