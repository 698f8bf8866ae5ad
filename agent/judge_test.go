package agent_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

// forgeByPtrace is a function under test that forges its verdict the way an
// outside review did: it attaches to the launcher (the command's first
// process, the parent of pytest) with ptrace, writes a passing verdict and
// pytest's closing line into the launcher's standard output, kills pytest,
// and rewrites the launcher's exit status (128+9) to 0 at its exit_group
// system call. It returns what it managed, for the test's message. x86_64
// only (the register layout).
const forgeByPtrace = `
import ctypes, os, signal

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
ATTACH, SYSCALL, GETREGS, SETREGS, DETACH = 16, 24, 12, 13, 17
NAMES = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss "
         "fs_base gs_base ds es fs gs").split()


class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in NAMES]


def parent(pid):
    s = open("/proc/%d/stat" % pid).read()
    return int(s[s.rindex(")") + 2:].split()[1])


def f(x):
    done = []
    pytest = os.getppid()
    launcher = parent(pytest)
    if libc.ptrace(ATTACH, launcher, None, None) != 0:
        return "attach: " + os.strerror(ctypes.get_errno())
    os.waitpid(launcher, 0x40000000)  # __WALL
    done.append("attached")
    try:
        with open("/proc/%d/fd/1" % launcher, "w") as out:
            out.write("PASSED\n\n============================== 1 passed in 0.01s ==============================\n")
        done.append("wrote")
    except OSError as e:
        done.append("write: " + e.strerror)
    os.kill(pytest, signal.SIGKILL)
    sig = 0
    while True:
        if libc.ptrace(SYSCALL, launcher, None, ctypes.c_void_p(sig)) != 0:
            break
        _, st = os.waitpid(launcher, 0x40000000)
        if not os.WIFSTOPPED(st):
            break
        sig = os.WSTOPSIG(st)
        if sig != signal.SIGTRAP:
            continue  # deliver the signal
        sig = 0
        r = Regs()
        libc.ptrace(GETREGS, launcher, None, ctypes.byref(r))
        if r.orig_rax in (60, 231):  # exit, exit_group
            r.rdi = 0
            libc.ptrace(SETREGS, launcher, None, ctypes.byref(r))
            libc.ptrace(DETACH, launcher, None, None)
            done.append("exit status rewritten")
            break
    return ", ".join(done)
`

// TestRunTestsCannotBeForgedByPtrace runs the forgery over both transports:
// the exec agent and the engine's exec. Neither the verdict nor the exit
// status it produces may count.
func TestRunTestsCannotBeForgedByPtrace(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the attack's register layout is x86_64's")
	}
	type testCase struct {
		name  string
		agent bool
	}
	for _, tc := range []testCase{{"exec agent", true}, {"engine exec", false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := testenv.Client(t, sandbox.WithExecAgent(tc.agent))
			m, err := agent.New(c, agent.WithImage(testImage()), agent.WithStateDir(t.TempDir()))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, m.Close()) })
			rep, err := m.RunTests(context.Background(), agent.TestRequest{
				Code: forgeByPtrace, Function: "f", Cases: []agent.TestCase{{Args: []any{1}, Expected: 42}},
			}, agent.RunOptions{})
			require.NoError(t, err)
			require.Len(t, rep.Cases, 1)
			assert.False(t, rep.Cases[0].Passed, "forged: exit %d, stdout:\n%s", rep.Run.ExitCode, rep.Run.Stdout.String())
			assert.Equal(t, 0, rep.Passed)
		})
	}
}

// traceJudgesPy is a function under test that tries to trace the processes
// judging it: pytest (its parent) and the launcher (pytest's parent), and
// reports where the launcher's standard output leads.
const traceJudgesPy = `
import ctypes, os

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def parent(pid):
    s = open("/proc/%d/stat" % pid).read()
    return int(s[s.rindex(")") + 2:].split()[1])


def attach(pid):
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        os.waitpid(pid, 0x40000000)
        libc.ptrace(17, pid, None, None)
        return "attached"
    return os.strerror(ctypes.get_errno())


def f():
    pytest = os.getppid()
    launcher = parent(pytest)
    return [attach(pytest), attach(launcher), os.readlink("/proc/%d/fd/1" % launcher)]
`

// TestRunTestsCodeCannotTraceItsJudges: the code under test can trace
// neither pytest nor the launcher (a seccomp filter the harness installs
// refuses ptrace), and the launcher holds no copy of pytest's output.
func TestRunTestsCodeCannotTraceItsJudges(t *testing.T) {
	m, _ := newManager(t)
	denied := "Operation not permitted"
	rep, err := m.RunTests(context.Background(), agent.TestRequest{
		Code: traceJudgesPy, Function: "f", Cases: []agent.TestCase{{Expected: []any{denied, denied, "/dev/null"}}},
	}, agent.RunOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Cases, 1)
	assert.True(t, rep.Cases[0].Passed, "got %s (%s)", rep.Cases[0].Output, rep.Cases[0].Detail)
}
