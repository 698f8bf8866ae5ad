// Package execagent is the exec agent that runs inside a sandbox and the
// host's client for it.
//
// The agent listens on a Unix socket in a directory that the host mounts into
// the sandbox; the host moves the socket out of that directory as soon as it
// appears, so that only the host can connect. Each connection runs one command. Both sides speak in frames:
// one byte of type, four bytes of big-endian payload length, the payload.
//
//	host  -> agent: Start (JSON StartRequest), then Stdin data, StdinEOF, Kill
//	agent -> host:  Stdout and Stderr data, then one Exit (JSON Result)
//
// An agent that listens on TCP (serve-tcp, in a Kubernetes pod, where the
// host reaches it through a port-forward) shares the port with every process
// of the sandbox, so each connection must first prove that it is the host's:
// its first frame is Auth with the token the host gave the agent on its
// standard input. A connection that does not is closed without an answer.
//
// The host closing the connection before Exit kills the command. The agent
// starts each command under a shim (the agent binary re-executed) that is a
// child subreaper and puts the command in a process group of its own: every
// process the command starts, also one that calls setsid or double-forks,
// stays a descendant of the shim, so a timeout kills exactly that tree.
package execagent

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version; the agent refuses a StartRequest of
// another version.
const Version = 1

// Frame types.
const (
	FrameAuth     byte = 'a' // host: the agent's token, first on a TCP connection
	FrameStart    byte = 'S' // host: JSON StartRequest
	FrameStdin    byte = 'i' // host: stdin bytes
	FrameStdinEOF byte = 'e' // host: stdin ends
	FrameKill     byte = 'k' // host: kill the command now
	FrameStdout   byte = 'o' // agent: stdout bytes
	FrameStderr   byte = 'r' // agent: stderr bytes
	FrameExit     byte = 'x' // agent: JSON Result, last frame
)

// MaxPayload bounds a frame's payload; a longer frame is a protocol error.
const MaxPayload = 1 << 20

// ErrProtocol: a peer sent a frame that breaks the protocol.
var ErrProtocol = errors.New("exec agent protocol error")

// StartRequest is the command to run.
type StartRequest struct {
	Version int      `json:"version"`
	Argv    []string `json:"argv"`
	// Env is added to the agent's environment (the sandbox's), as KEY=VALUE.
	Env []string `json:"env,omitempty"`
	// Dir is the working directory; empty keeps the agent's.
	Dir string `json:"dir,omitempty"`
	// Stdin says that Stdin frames follow; without it stdin is /dev/null.
	Stdin bool `json:"stdin,omitempty"`
	// TimeoutNS bounds the command; 0 means no bound.
	TimeoutNS int64 `json:"timeout_ns,omitempty"`
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the exit status, or 128 plus the signal that ended the
	// command, as a shell reports it; when it could not be started
	// (StartError says why), 127 when its program was not found and 126
	// otherwise.
	ExitCode int `json:"exit_code"`
	// Signal that ended the command's first process, 0 when it exited.
	Signal int `json:"signal,omitempty"`
	// TimedOut: the timeout or a Kill ended the command, and every process
	// of it was killed.
	TimedOut bool `json:"timed_out,omitempty"`
	// OOMKilled: the command's first process was killed by SIGKILL while the
	// sandbox's memory cgroup counted an OOM kill.
	OOMKilled bool `json:"oom_killed,omitempty"`
	// StartError says why the command could not be started.
	StartError string `json:"start_error,omitempty"`
	// Error says why the agent could not start the command or could not
	// learn how it ended (no process slot for the command's shim, the shim
	// died); ExitCode is then -1 and means nothing. The caller reports it
	// as an error, never as the command's result.
	Error string `json:"error,omitempty"`
	// KillError says why the command's processes could not all be killed;
	// the caller must then end the whole sandbox.
	KillError string `json:"kill_error,omitempty"`
	// MaxRSSKB is the largest resident set of any one process of the
	// command, in KiB; UserNS and SysNS the CPU time all of them used.
	MaxRSSKB int64 `json:"max_rss_kb,omitempty"`
	UserNS   int64 `json:"user_ns,omitempty"`
	SysNS    int64 `json:"sys_ns,omitempty"`
	// WallNS is the time from start to the end of the first process.
	WallNS int64 `json:"wall_ns,omitempty"`
}

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("%w: frame of %d bytes", ErrProtocol, len(payload))
	}
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if len(payload) == 0 {
		_, err := w.Write(hdr[:])
		return err
	}
	// One write per frame keeps concurrent writers (under the caller's
	// lock) and the kernel's socket buffer in step.
	buf := make([]byte, 0, 5+len(payload))
	_, err := w.Write(append(append(buf, hdr[:]...), payload...))
	return err
}

// WriteJSON writes v as a frame's JSON payload.
func WriteJSON(w io.Writer, typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteFrame(w, typ, b)
}

// ReadFrame reads one frame into buf (grown when too small) and returns its
// type and payload, which aliases buf.
func ReadFrame(r io.Reader, buf []byte) (typ byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxPayload {
		return 0, nil, fmt.Errorf("%w: frame of %d bytes", ErrProtocol, n)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return hdr[0], buf, nil
}

// What the agent costs against a sandbox's process limit (pids.max counts
// threads as well as processes). The host raises the limit by
// PidsAllowance, so that a command run through the agent can make as many
// processes as one run through the engine's exec.
const (
	// AgentTasks is the agent's threads once it listens: it runs with
	// GOMAXPROCS=1 and makes them before (HoldThreads), and keeps them
	// idle, so that it needs no new one while a command holds every
	// process slot.
	AgentTasks = 8
	// ShimTasks is a command's shim's threads, made before it takes a
	// command (see [Shim]).
	//
	// The Go runtime starts threads of its own accord as scheduling goes;
	// HoldThreads tops them up to these counts, which are above what it
	// starts nearly always. When it starts one more, the command has one
	// process fewer than through the engine's exec.
	ShimTasks = 6
	// PidsAllowance is what a sandbox with the agent needs beyond one
	// without: the agent replaces the idle sleep of the sandbox's main
	// process, and a command has a shim that the engine's exec does not
	// have. Each further command running at the same time takes ShimTasks
	// more.
	PidsAllowance = AgentTasks - 1 + ShimTasks
)

// TokenLen is the length of an agent's token in bytes; it travels as
// 2*TokenLen hex digits and a newline on the agent's standard input.
const TokenLen = 32

// TCPArg is the agent's first argument when it listens on the sandbox's
// loopback TCP (see [FrameAuth]): it reads its token from standard input,
// prints ListeningPrefix and the port on standard output once it listens,
// and exits when its standard input ends.
const TCPArg = "serve-tcp"

// ListeningPrefix begins the line a TCP agent prints once it listens,
// followed by the port.
const ListeningPrefix = "swebox-agent listening on port "

// LeaseArg, after the socket, makes the agent exit when its standard input
// ends: the host holds that input open for as long as it owns the sandbox.
const LeaseArg = "lease"
