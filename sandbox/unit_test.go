package sandbox

import (
	"archive/tar"
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/pkg/stdcopy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCapBuffer(t *testing.T) {
	type testCase struct {
		name      string
		limit     int
		writes    []string
		wantHead  string
		wantTail  string
		truncated bool
		dropped   int64
	}
	for _, tc := range []testCase{
		{name: "fits", limit: 10, writes: []string{"abc", "def"}, wantHead: "abcdef"},
		{name: "exactly the cap", limit: 6, writes: []string{"abcdef"}, wantHead: "abcdef"},
		{name: "one write over", limit: 6, writes: []string{"abcdefgh"}, wantHead: "abc", wantTail: "fgh", truncated: true, dropped: 2},
		{name: "many small writes wrap the ring", limit: 4, writes: []string{"a", "b", "c", "d", "e", "f", "g"}, wantHead: "ab", wantTail: "fg", truncated: true, dropped: 3},
		{name: "big write after small", limit: 4, writes: []string{"a", "bcdefghij"}, wantHead: "ab", wantTail: "ij", truncated: true, dropped: 6},
		{name: "odd cap", limit: 5, writes: []string{"0123456789"}, wantHead: "01", wantTail: "789", truncated: true, dropped: 5},
		{name: "empty", limit: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCapBuffer(tc.limit)
			var total int64
			for _, w := range tc.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
				total += int64(n)
			}
			o := b.Output()
			assert.Equal(t, tc.wantHead, string(o.Head))
			assert.Equal(t, tc.wantTail, string(o.Tail))
			assert.Equal(t, tc.truncated, o.Truncated)
			assert.Equal(t, tc.dropped, o.Dropped)
			assert.Equal(t, total, o.Total)
			assert.Equal(t, o.Total, int64(len(o.Head)+len(o.Tail))+o.Dropped)
		})
	}
	o := Output{Head: []byte("ab"), Tail: []byte("yz"), Truncated: true, Dropped: 22}
	assert.Equal(t, "ab\n[... 22 bytes dropped ...]\nyz", o.String())
	assert.Equal(t, "abyz", string(o.Bytes()))
}

func TestDemuxKeepsStreamsApart(t *testing.T) {
	var mux bytes.Buffer
	ow, ew := stdcopy.NewStdWriter(&mux, stdcopy.Stdout), stdcopy.NewStdWriter(&mux, stdcopy.Stderr)
	for i := range 100 {
		_, _ = ow.Write([]byte(strings.Repeat("o", i)))
		_, _ = ew.Write([]byte(strings.Repeat("e", i)))
	}
	out, errb := newCapBuffer(1000), newCapBuffer(1000)
	var live bytes.Buffer
	_, err := stdcopy.StdCopy(streamWriter(out, &live), streamWriter(errb, nil), &mux)
	require.NoError(t, err)
	o, e := out.Output(), errb.Output()
	assert.Equal(t, int64(4950), o.Total)
	assert.Equal(t, int64(4950), e.Total)
	assert.NotContains(t, string(o.Bytes()), "e")
	assert.NotContains(t, string(e.Bytes()), "o")
	assert.Equal(t, 4950, live.Len(), "the live writer sees every byte")
}

func TestPolicy(t *testing.T) {
	type testCase struct {
		name      string
		policy    Policy
		argv      []string
		allowed   bool
		wantShell string
	}
	for _, tc := range []testCase{
		{name: "default admits pytest", argv: []string{"pytest", "-x"}, allowed: true},
		{name: "default checks the base name", argv: []string{"/usr/bin/python3", "-c", "1"}, allowed: true},
		{name: "default refuses curl", argv: []string{"curl"}},
		{name: "default has no shell", argv: []string{"sh", "-c", "x"}},
		{name: "path tricks do not help", argv: []string{"/usr/bin/git/../curl"}},
		{name: "allow all", policy: AllowAll(), argv: []string{"anything"}, allowed: true, wantShell: "sh"},
		{name: "explicit list with bash", policy: AllowCommands("bash", "git"), argv: []string{"git"}, allowed: true, wantShell: "bash"},
		{name: "empty list admits nothing", policy: AllowCommands(), argv: []string{"git"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Check(tc.argv)
			if tc.allowed {
				assert.NoError(t, err)
			} else {
				var ce *CommandError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, ErrCommandNotAllowed)
			}
			assert.Equal(t, tc.wantShell, tc.policy.Shell())
		})
	}
	assert.ErrorIs(t, AllowAll().Check(nil), ErrInvalidSpec)

	// The default allowlist cannot be changed through what the package
	// hands out.
	DefaultCommands()[0] = "curl"
	var ce *CommandError
	require.ErrorAs(t, Policy{}.Check([]string{"curl"}), &ce)
	ce.Allowed[0] = "curl"
	assert.Error(t, Policy{}.Check([]string{"curl"}))
	assert.NoError(t, Policy{}.Check([]string{"git"}))
}

func TestSpecValidate(t *testing.T) {
	type testCase struct {
		name  string
		spec  Spec
		field string // "" = valid
	}
	ok := Spec{Image: "img"}
	with := func(f func(*Spec)) Spec { s := ok; f(&s); return s }
	for _, tc := range []testCase{
		{name: "minimal", spec: ok},
		{name: "no image", spec: Spec{}, field: "Image"},
		{name: "relative workspace", spec: with(func(s *Spec) { s.Workspace = "ws" }), field: "Workspace"},
		{name: "root without relax", spec: with(func(s *Spec) { s.User = "0:0" }), field: "User"},
		{name: "root with relax", spec: with(func(s *Spec) { s.User = "0:0"; s.Relax.Root = true })},
		{name: "named user", spec: with(func(s *Spec) { s.User = "sandbox" }), field: "User"},
		{name: "bad env", spec: with(func(s *Spec) { s.Env = map[string]string{"A=B": "x"} }), field: "Env"},
		{name: "tiny memory", spec: with(func(s *Spec) { s.Limits.Memory = 1 << 20 }), field: "Limits.Memory"},
		{name: "bad log size", spec: with(func(s *Spec) { s.Limits.LogSize = "lots" }), field: "Limits.LogSize"},
		{name: "mount over root", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "tmpfs", Target: "/"}} }), field: "Mounts[0].Target"},
		{name: "relative bind", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "x", Target: "/x"}} }), field: "Mounts[0].Source"},
		{name: "unknown mount type", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "nfs", Target: "/x"}} }), field: "Mounts[0].Type"},
		// Every relaxation shows in Relax.
		{name: "gid 0 without relax", spec: with(func(s *Spec) { s.User = "1000:0" }), field: "User"},
		{name: "gid 0 with relax", spec: with(func(s *Spec) { s.User = "1000:0"; s.Relax.Root = true })},
		{name: "read-write bind", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/srv/data", Target: "/data"}} }), field: "Mounts[0].ReadOnly"},
		{name: "read-write bind with relax", spec: with(func(s *Spec) {
			s.Mounts = []Mount{{Source: "/srv/data", Target: "/data"}}
			s.Relax.WritableMounts = true
		})},
		{name: "read-only bind", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/srv/data", Target: "/data", ReadOnly: true}} })},
		{name: "docker socket, even read-only", spec: with(func(s *Spec) {
			s.Mounts = []Mount{{Source: "/var/run/docker.sock", Target: "/var/run/docker.sock", ReadOnly: true}}
		}), field: "Mounts[0].Source"},
		{name: "a socket by name", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/home/u/podman.sock", Target: "/s", ReadOnly: true}} }), field: "Mounts[0].Source"},
		{name: "host root", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/", Target: "/host", ReadOnly: true}} }), field: "Mounts[0].Source"},
		{name: "a directory holding /var/run", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/var/", Target: "/host", ReadOnly: true}} }), field: "Mounts[0].Source"},
		{name: "host /etc", spec: with(func(s *Spec) { s.Mounts = []Mount{{Source: "/etc/ssl", Target: "/ssl", ReadOnly: true}} }), field: "Mounts[0].Source"},
		{name: "host system path with relax", spec: with(func(s *Spec) {
			s.Mounts = []Mount{{Source: "/var/run/docker.sock", Target: "/var/run/docker.sock", ReadOnly: true}}
			s.Relax.HostSystemPaths = true
		})},
		{name: "host root as the workspace", spec: with(func(s *Spec) { s.Workspace = "/" }), field: "Workspace"},
		{name: "host /proc as the workspace", spec: with(func(s *Spec) { s.Workspace = "/proc/1" }), field: "Workspace"},
		{name: "tmpfs over /etc", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "tmpfs", Target: "/etc"}} }), field: "Mounts[0].ReadOnly"},
		{name: "volume under /usr", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "volume", Target: "/usr/local/lib"}} }), field: "Mounts[0].ReadOnly"},
		{name: "tmpfs over /etc with relax", spec: with(func(s *Spec) {
			s.Mounts = []Mount{{Type: "tmpfs", Target: "/etc"}}
			s.Relax.WritableRootFS = true
		})},
		{name: "read-only tmpfs over /etc", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "tmpfs", Target: "/etc", ReadOnly: true}} })},
		{name: "a directory named like a system one", spec: with(func(s *Spec) { s.Mounts = []Mount{{Type: "tmpfs", Target: "/etcetera"}} })},
		{name: "tmpfs over /proc", spec: with(func(s *Spec) {
			s.Mounts = []Mount{{Type: "tmpfs", Target: "/proc/sys"}}
			s.Relax.WritableRootFS = true
		}), field: "Mounts[0].Target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.field, se.Field)
			assert.ErrorIs(t, err, ErrInvalidSpec)
		})
	}
}

func TestHostSystemPathResolvesSymlinks(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "looks-harmless")
	require.NoError(t, os.Symlink("/etc", link))
	err := Spec{Image: "img", Mounts: []Mount{{Source: link, Target: "/x", ReadOnly: true}}}.Validate()
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Mounts[0].Source", se.Field)

	// A socket on this machine, whatever its name.
	sock := filepath.Join(dir, "engine")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	err = Spec{Image: "img", Mounts: []Mount{{Source: sock, Target: "/x", ReadOnly: true}}}.Validate()
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Reason, "a socket")
	assert.NoError(t, Spec{Image: "img", Mounts: []Mount{{Source: dir, Target: "/x", ReadOnly: true}}}.Validate(), "a plain directory")
}

func TestHardenedDefaults(t *testing.T) {
	c := &Client{session: "s1"}
	spec := Spec{Image: "img", Workspace: "/host/ws"}.withDefaults()
	cfg, hc := containerConfig(spec, []string{"x"}, c.labels(map[string]string{"swebox.run": "r"}))
	assert.Equal(t, "1000:1000", cfg.User)
	assert.True(t, cfg.NetworkDisabled)
	assert.Equal(t, "none", string(hc.NetworkMode))
	assert.True(t, hc.ReadonlyRootfs)
	assert.Equal(t, []string{"ALL"}, []string(hc.CapDrop))
	assert.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
	assert.True(t, *hc.Init)
	assert.Equal(t, int64(512), *hc.PidsLimit)
	assert.Equal(t, int64(2<<30), hc.Memory)
	assert.Equal(t, hc.Memory, hc.MemorySwap)
	assert.Equal(t, int64(2e9), hc.NanoCPUs)
	assert.Contains(t, hc.Tmpfs["/tmp"], "size=536870912")
	assert.Equal(t, "10m", hc.LogConfig.Config["max-size"])
	assert.Equal(t, map[string]string{LabelManaged: "true", LabelSession: "s1", LabelOwner: ownerID(), "swebox.run": "r"}, cfg.Labels)
	assert.Contains(t, cfg.Env, "HOME=/tmp/home")
	assert.Equal(t, "/workspace", cfg.WorkingDir)
	require.Len(t, hc.Mounts, 1)
	assert.Equal(t, "/host/ws", hc.Mounts[0].Source)
	assert.False(t, hc.Mounts[0].ReadOnly)
}

func TestPathChecker(t *testing.T) {
	type testCase struct {
		name    string
		entries []tar.Header
		bad     bool
	}
	reg := func(n string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeReg} }
	sym := func(n, to string) tar.Header { return tar.Header{Name: n, Typeflag: tar.TypeSymlink, Linkname: to} }
	for _, tc := range []testCase{
		{name: "plain", entries: []tar.Header{reg("a/b/c.txt")}},
		{name: "dot dot", entries: []tar.Header{reg("a/../../x")}, bad: true},
		{name: "absolute", entries: []tar.Header{reg("/x")}, bad: true},
		{name: "relative symlink inside", entries: []tar.Header{sym("a/b/l", "../c")}},
		{name: "relative symlink to the root itself", entries: []tar.Header{sym("a/l", "..")}},
		{name: "relative symlink out", entries: []tar.Header{sym("a/l", "../../x")}, bad: true},
		{name: "symlink out through a long way", entries: []tar.Header{sym("l", "a/../../x")}, bad: true},
		{name: "absolute symlink", entries: []tar.Header{sym("l", "/etc/passwd")}, bad: true},
		{name: "entry through a symlink", entries: []tar.Header{sym("l", "a"), reg("l/x")}, bad: true},
		{name: "hard link out", entries: []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "../x"}}, bad: true},
		{name: "NUL in name", entries: []tar.Header{reg("a\x00b")}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pc pathChecker
			var err error
			for i := range tc.entries {
				if _, err = pc.check(&tc.entries[i]); err != nil {
					break
				}
			}
			if tc.bad {
				assert.True(t, errors.Is(err, ErrUnsafePath), "want refusal, got %v", err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}
