package execagent

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// linux/prctl.h
const (
	prSetDumpable       = 4  // PR_SET_DUMPABLE
	prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER
)

// Undumpable makes the calling process non-dumpable. The agent and the shim
// judge the commands they run: they hold the pipes of a command's output and
// report its exit status. A command runs as the same user, and the kernel
// lets a process of the same user ptrace another (Docker's default seccomp
// profile allows ptrace, and containers have no Yama), write its memory
// through /proc/PID/mem or process_vm_writev, open its descriptors through
// /proc/PID/fd or take them with pidfd_getfd, all of which would let the
// command rewrite its own result. Every one of these checks
// ptrace_may_access, which refuses a non-dumpable target to a caller without
// CAP_SYS_PTRACE, and sandboxes drop every capability. An execve resets the
// flag, so the commands the shim starts are dumpable as before.
func Undumpable() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// Shim runs commands for the agent, one at a time, and returns the shim's
// exit code. The agent starts it with a control socket at fd 3 and sends
// each command there, with its standard streams as file descriptors.
//
// The shim is a child subreaper: every process a command leaves behind is
// re-parented to it rather than to the sandbox's init, so all of them stay
// its descendants, and the agent can find and kill them. The shim reaps
// them, reports the command's first process's status when it ends and, when
// the agent releases the command, the resource usage of every process of
// the command it reaped. A shim whose command left processes behind takes
// no other command: it exits, so that they cannot be mistaken for the next
// command's.
//
// The shim is one goroutine in blocking system calls, with no signal
// handler and no poller, and it makes its threads before it takes a
// command: its runtime then has ShimTasks threads and needs no other while
// a command holds every process slot of the sandbox (a blocking call hands
// the scheduler to an idle thread).
func Shim() int {
	syscall.CloseOnExec(3)
	// The agent made the socket non-blocking; the shim's end blocks, so
	// that reading and writing it are plain system calls.
	if err := syscall.SetNonblock(3, false); err != nil {
		return 1
	}
	ctrl := os.NewFile(3, "ctrl")
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return 1
	}
	HoldThreads(ShimTasks)
	home, _ := os.Getwd()
	homePath := os.Getenv("PATH")

	for {
		typ, payload, fds, err := readShimFrame(ctrl)
		if err != nil {
			return 0
		}
		var cmd shimCommand
		if typ != frameShimCommand || len(fds) != 3 || json.Unmarshal(payload, &cmd) != nil || len(cmd.Argv) == 0 {
			return 2
		}
		pid, startCode, startErr, forkErr := startCommand(cmd, fds, home, homePath)
		for _, fd := range fds {
			_ = syscall.Close(fd) // the command holds them now
		}
		var usage shimUsage
		add := func(ru *syscall.Rusage) {
			usage.MaxRSSKB = max(usage.MaxRSSKB, ru.Maxrss)
			usage.UserNS += syscall.TimevalToNsec(ru.Utime)
			usage.SysNS += syscall.TimevalToNsec(ru.Stime)
		}
		switch {
		case forkErr != nil:
			_ = WriteJSON(ctrl, frameShimStatus, shimExit{Code: -1, Error: "start the command's first process: " + forkErr.Error()})
		case startErr != "":
			_ = WriteJSON(ctrl, frameShimStatus, shimExit{Code: startCode, StartError: startErr})
		default:
			// Reap until the first process ends; processes it left
			// behind are reaped too, as they end.
			for {
				var ws syscall.WaitStatus
				var ru syscall.Rusage
				p, err := syscall.Wait4(-1, &ws, 0, &ru)
				if err == syscall.EINTR {
					continue
				}
				if err != nil {
					return 1 // cannot be: the first process is a child
				}
				add(&ru)
				if p == pid {
					st := shimExit{Code: ws.ExitStatus()}
					if ws.Signaled() {
						st = shimExit{Code: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
					}
					_ = WriteJSON(ctrl, frameShimStatus, st)
					break
				}
			}
		}
		if typ, _, _, err := readShimFrame(ctrl); err != nil || typ != frameShimRelease {
			return 0
		}
		// Every live process of the command has a live chain of parents
		// up to a child of the shim, so the shim has children exactly
		// when one is left.
		for {
			var ru syscall.Rusage
			p, err := syscall.Wait4(-1, nil, syscall.WNOHANG, &ru)
			if p <= 0 || err != nil {
				usage.Reusable = errors.Is(err, syscall.ECHILD)
				break
			}
			add(&ru)
		}
		_ = WriteJSON(ctrl, frameShimUsage, usage)
		if !usage.Reusable {
			return 0
		}
	}
}

// readShimFrame reads a frame from the control socket, with the file
// descriptors that came with its first bytes.
func readShimFrame(ctrl *os.File) (typ byte, payload []byte, fds []int, err error) {
	hdr := make([]byte, 5)
	oob := make([]byte, syscall.CmsgSpace(3*4))
	sc, err := ctrl.SyscallConn()
	if err != nil {
		return 0, nil, nil, err
	}
	var n, oobn int
	var rerr error
	if err := sc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), hdr, oob, syscall.MSG_CMSG_CLOEXEC)
		return rerr != syscall.EAGAIN
	}); err != nil {
		return 0, nil, nil, err
	}
	if rerr != nil {
		return 0, nil, nil, rerr
	}
	if n == 0 {
		return 0, nil, nil, io.EOF
	}
	if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := syscall.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if _, err := io.ReadFull(ctrl, hdr[n:]); err != nil {
		return 0, nil, nil, err
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	if size > MaxPayload {
		return 0, nil, nil, ErrProtocol
	}
	payload = make([]byte, size)
	if _, err := io.ReadFull(ctrl, payload); err != nil {
		return 0, nil, nil, err
	}
	return hdr[0], payload, fds, nil
}

// startCommand starts cmd in a process group of its own with the given
// stdio; it returns the pid, or why it could not start: startErr when the
// command cannot run (worded like the engine's message), with the status a
// shell gives it (127: no such program; 126: cannot execute), forkErr when no
// process could be made for it (the sandbox's process limit, memory). home
// and homePath are the shim's own directory and PATH, which a command
// without its own gets.
func startCommand(cmd shimCommand, stdio []int, home, homePath string) (pid, startCode int, startErr string, forkErr error) {
	// The command's PATH, not the shim's, finds its program.
	path := homePath
	for _, kv := range cmd.Env {
		if len(kv) >= 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	_ = os.Setenv("PATH", path)
	dir := cmd.Dir
	if dir == "" {
		dir = home
	}
	if err := os.Chdir(dir); err != nil {
		return 0, 126, "chdir to cwd (\"" + cmd.Dir + "\") set in config.json failed: " + errors.Unwrap(err).Error(), nil
	}
	prog, err := exec.LookPath(cmd.Argv[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return 0, notFoundCode(err), err.Error(), nil // exec: "name": executable file not found in $PATH
	}
	pid, err = syscall.ForkExec(prog, cmd.Argv, &syscall.ProcAttr{
		Env:   cmd.Env,
		Files: []uintptr{uintptr(stdio[0]), uintptr(stdio[1]), uintptr(stdio[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM) {
		return 0, 0, "", err
	}
	if err != nil {
		// ENOENT here is a script's missing interpreter, "not found" to
		// a shell too.
		return 0, notFoundCode(err), "exec: \"" + cmd.Argv[0] + "\": " + err.Error(), nil
	}
	return pid, 0, "", nil
}

// notFoundCode is a shell's exit status for a command that could not
// start because of err: 127 when there is no such program, else 126.
func notFoundCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}
