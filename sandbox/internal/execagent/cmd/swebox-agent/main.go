//go:build linux

// Command swebox-agent is the exec agent that runs inside a sandbox:
//
//	swebox-agent serve SOCKET [lease]
//	swebox-agent serve-tcp FILESIZE
//
// listens on the Unix socket SOCKET and runs the commands the host sends (see
// package execagent). With lease it exits when its standard input ends.
// serve-tcp reads a token from standard input, listens on a free port of
// 127.0.0.1, prints it, serves only connections that present the token, and
// exits when its standard input ends; it sets its file size limit to
// FILESIZE bytes, which its commands inherit. The agent re-executes itself
// as "swebox-agent shim" to watch over each command.
package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/swebox/swebox/sandbox/internal/execagent"
)

func main() {
	// Before anything else: commands of the sandbox's user must not be able
	// to trace the agent or its shims (see execagent.Undumpable). Without
	// it the agent does not run, and the host uses the engine's exec.
	if err := execagent.Undumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "swebox-agent: make the process non-dumpable:", err)
		os.Exit(1)
	}
	if len(os.Args) == 2 && os.Args[1] == execagent.ShimArg {
		os.Exit(execagent.Shim())
	}
	if len(os.Args) == 3 && os.Args[1] == execagent.TCPArg {
		// The copy in the sandbox's /tmp would hold space of the /tmp the
		// sandbox's commands get: the agent moves into memory of its own
		// and removes the copy first. It has read nothing of its input yet.
		if err := execFromMemory(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "swebox-agent: move into memory:", err)
			os.Exit(1)
		}
	}
	if len(os.Args) == 4 && os.Args[1] == execagent.TCPArg && os.Args[2] == inMemoryArg {
		runtime.GOMAXPROCS(1)
		// The file size limit is set here, after the copy into memory,
		// which a limit smaller than the binary would have failed; the
		// shims, and so every command, inherit it.
		fsize, err := strconv.ParseUint(os.Args[3], 10, 64)
		if err == nil {
			err = unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: fsize, Max: fsize})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "swebox-agent: file size limit:", err)
			os.Exit(1)
		}
		err = serveTCP()
		fmt.Fprintln(os.Stderr, "swebox-agent:", err)
		os.Exit(1)
	}
	leased := len(os.Args) == 4 && os.Args[3] == execagent.LeaseArg
	if len(os.Args) != 3 && !leased || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: swebox-agent serve SOCKET [lease]")
		os.Exit(2)
	}
	// One P: the agent's work is waiting, and every OS thread it holds
	// counts against the sandbox's process limit (see PidsAllowance).
	runtime.GOMAXPROCS(1)
	if leased {
		go awaitLeaseEnd()
	}
	err := serve(os.Args[2])
	fmt.Fprintln(os.Stderr, "swebox-agent:", err)
	os.Exit(1)
}

// serve returns only when the agent cannot go on.
func serve(socket string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The shell that starts the agent sets PWD; the engine's exec does not,
	// and commands must see the same environment through either.
	_ = os.Unsetenv("PWD")
	// The threads exist before the host can send a command.
	execagent.HoldThreads(execagent.AgentTasks)
	_ = os.Remove(socket)
	// Only the sandbox's user may connect. The socket is made private as it
	// is bound, not chmod-ed after: the host moves it out of the sandbox's
	// reach as soon as it appears (see sandbox's agent.go).
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", socket)
	syscall.Umask(old)
	if err != nil {
		return err
	}
	s := &execagent.Server{Self: self}
	return s.Serve(ln)
}

// serveTCP serves on the sandbox's loopback for a host that reaches it
// through a port-forward (see sandbox/kube's agent.go). The token comes on
// standard input, so it is in no command line or environment another process
// of the sandbox could read, and the agent is non-dumpable, so its memory and
// file descriptors are closed to them too. The binary was copied into the
// sandbox for this start only: the agent runs from a copy in memory (see
// execFromMemory), and runs its shims from that (/proc/self/exe), which
// nothing in the sandbox can replace.
func serveTCP() error {
	token, err := readToken(os.Stdin)
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	_ = os.Unsetenv("PWD")
	execagent.HoldThreads(execagent.AgentTasks)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go awaitLeaseEnd()
	fmt.Printf("%s%d\n", execagent.ListeningPrefix, ln.Addr().(*net.TCPAddr).Port)
	s := &execagent.Server{Self: "/proc/self/exe", Token: token}
	return s.Serve(ln)
}

// inMemoryArg follows TCPArg once the agent runs from memory.
const inMemoryArg = "in-memory"

// execFromMemory copies the agent's binary into a sealed memfd, removes
// the file it was started from, and executes the copy.
func execFromMemory(fsize string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return err
	}
	fd, err := unix.MemfdCreate("swebox-agent", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "swebox-agent")
	if _, err := f.Write(bin); err != nil {
		return err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return err
	}
	if err := os.Remove(self); err != nil {
		return err
	}
	return syscall.Exec(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), []string{os.Args[0], execagent.TCPArg, inMemoryArg, fsize}, os.Environ())
}

// readToken reads the hex token line from r a byte at a time, so that
// nothing after it is consumed: the rest of the input is the lease.
func readToken(r io.Reader) ([]byte, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) <= 2*execagent.TokenLen {
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
	}
	token, err := hex.DecodeString(string(line))
	if err != nil || len(token) != execagent.TokenLen {
		return nil, fmt.Errorf("want %d hex digits and a newline", 2*execagent.TokenLen)
	}
	return token, nil
}

// awaitLeaseEnd exits once standard input ends. The input is opened anew
// (/proc/self/fd/0: a description of its own, since the shell that started
// the agent reads the same pipe afterwards) and read through the runtime's
// poller, non-blocking, so the wait holds no thread of its own: every
// thread counts against the sandbox's process limit.
func awaitLeaseEnd() {
	fd, err := syscall.Open("/proc/self/fd/0", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "swebox-agent: lease:", err)
		os.Exit(1)
	}
	_, _ = io.Copy(io.Discard, os.NewFile(uintptr(fd), "lease"))
	os.Exit(0)
}
