package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/internal/engineflags"
)

const (
	envToken  = "env-0123456789abcdef0123456789abcdef"
	flagToken = "flag-0123456789abcdef0123456789abcdef"
)

func TestParseFlags(t *testing.T) {
	env := func(token string) func(string) string {
		return func(k string) string {
			if k == "SWEBOX_MCP_TOKEN" {
				return token
			}
			return ""
		}
	}
	type testCase struct {
		name  string
		args  []string
		token string // SWEBOX_MCP_TOKEN
		check func(t *testing.T, c config)
		err   string
	}
	for _, tc := range []testCase{
		{name: "defaults", check: func(t *testing.T, c config) {
			assert.Empty(t, c.HTTPAddr, "stdio by default")
			assert.Equal(t, []string{agent.DefaultImage}, c.Images)
			assert.Equal(t, defaultTimeout, c.Timeout)
			assert.Equal(t, defaultOutputLimit, c.OutputLimit)
			assert.EqualValues(t, defaultMemory, c.Memory)
			assert.Empty(t, c.EgressAllow, "no network by default")
			assert.Equal(t, defaultMaxSessions, c.MaxSessions)
			assert.Equal(t, defaultIdleExpiry, c.IdleExpiry)
			assert.Empty(t, c.Kubeconfig, "Docker by default")
			assert.Equal(t, engineflags.DefaultKubeNamespace, c.KubeNamespace)
			assert.True(t, c.KubeImageAffinity)
			assert.False(t, c.NoTaskSpare, "a reset task session keeps a spare by default")
		}},
		{name: "task spares", args: []string{"--no_task_spare"}, check: func(t *testing.T, c config) {
			assert.True(t, c.NoTaskSpare)
		}},
		{name: "bare port binds loopback", args: []string{"--http", ":8080"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
		}},
		{name: "explicit host kept", args: []string{"--http", "0.0.0.0:9"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "0.0.0.0:9", c.HTTPAddr)
		}},
		{name: "token from the environment", token: envToken, check: func(t *testing.T, c config) {
			assert.Equal(t, envToken, c.Token)
		}},
		{name: "flag token wins", args: []string{"--token", flagToken}, token: envToken, check: func(t *testing.T, c config) {
			assert.Equal(t, flagToken, c.Token)
		}},
		{name: "short flag token refused", args: []string{"--token", "hunter2"}, err: "has 7 characters; one shorter than 32 can be guessed"},
		{name: "short environment token refused", token: "0123456789abcdef0123456789abcde", err: "(--token or SWEBOX_MCP_TOKEN) has 31 characters"},
		// --timeout 60 means 60 seconds, as eval's --timeout does.
		{name: "timeout in seconds as eval takes it", args: []string{"--timeout", "60", "--eval_timeout", "1800", "--idle", "90", "--progress_interval", "0.5"}, check: func(t *testing.T, c config) {
			assert.Equal(t, 60*time.Second, c.Timeout)
			assert.Equal(t, 30*time.Minute, c.EvalTimeout)
			assert.Equal(t, 90*time.Second, c.IdleExpiry)
			assert.Equal(t, 500*time.Millisecond, c.ProgressTick)
		}},
		{name: "timeout with a unit", args: []string{"--timeout=2m"}, check: func(t *testing.T, c config) {
			assert.Equal(t, 2*time.Minute, c.Timeout)
		}},
		{name: "bad timeout", args: []string{"--timeout", "soon"}, err: `want seconds (60) or a duration (2m, 1h30m), got "soon"`},
		// One flag style with eval (underscores); the hyphens of earlier
		// releases still read, and a value is never rewritten.
		{name: "hyphenated names of earlier releases", args: []string{"--max-sessions", "3", "-output-limit=2k", "--name", "a-b", "--log-file", "x-y.log"}, check: func(t *testing.T, c config) {
			assert.Equal(t, 3, c.MaxSessions)
			assert.Equal(t, 2<<10, c.OutputLimit)
			assert.Equal(t, "a-b", c.Name)
			assert.Equal(t, "x-y.log", c.LogFile)
		}},
		{name: "limits", args: []string{"--memory", "512m", "--output_limit", "4k", "--timeout", "5s", "--image", "a:1,b:2", "--egress_allow", "x.org", "--egress_allow", "y.org"},
			check: func(t *testing.T, c config) {
				assert.EqualValues(t, 512<<20, c.Memory)
				assert.Equal(t, 4<<10, c.OutputLimit)
				assert.Equal(t, 5*time.Second, c.Timeout)
				assert.Equal(t, []string{"a:1", "b:2"}, c.Images)
				assert.Equal(t, []string{"x.org", "y.org"}, c.EgressAllow)
			}},
		{name: "bad address", args: []string{"--http", "8080"}, err: "host:port"},
		{name: "tiny memory", args: []string{"--memory", "1m"}, err: "--memory"},
		{name: "zero timeout", args: []string{"--timeout", "0s"}, err: "--timeout"},
		{name: "no running slots", args: []string{"--max_running", "0"}, err: "--max_running"},
		{name: "label with a comma", args: []string{"--name", "a,b"}, err: "--name"},
		{name: "missing dataset", args: []string{"--dataset", "/nonexistent.jsonl"}, err: "--dataset"},
		{name: "stray argument", args: []string{"serve"}, err: "unexpected argument"},
		{name: "kube flags", args: []string{"--kube_node_grace", "40"}, err: "--kube_node_grace applies to Kubernetes, chosen by --kubeconfig"},
		{name: "kube namespace without kubeconfig", args: []string{"--kube_namespace", "ns"}, err: "--kube_namespace applies to Kubernetes"},
		// Features whose sandboxes need this machine's files or sockets
		// are refused on a cluster before the build is asked about.
		{name: "pool on a cluster", args: []string{"--kubeconfig", "k", "--pool", "2"}, err: "--pool with --kubeconfig"},
		{name: "egress on a cluster", args: []string{"--kubeconfig", "k", "--egress_allow", "x.org"}, err: "--egress_allow with --kubeconfig"},
		{name: "wheels on a cluster", args: []string{"--kubeconfig", "k", "--wheel_dir", "/w"}, err: "--wheel_dir, --pip_index and --pip_host with --kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, env(tc.token), io.Discard)
			if tc.err != "" {
				require.ErrorIs(t, err, errUsage)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"a.txt", "a.txt", true},
		{"dir/./b.txt", "dir/b.txt", true},
		{"/workspace/output/x.png", "output/x.png", true},
		{"dir/../c", "c", true},
		{"..", "", false},
		{"../x", "", false},
		{"a/../../x", "", false},
		{"/etc/passwd", "", false},
		{"", "", false},
		{".", "", false},
		{"a\\..\\b", "", false},
	} {
		got, err := cleanPath(tc.in)
		if !tc.ok {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
}

// The command refuses a guessable token before it starts anything.
func TestShortTokenRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if k == "SWEBOX_MCP_TOKEN" {
			return "secret"
		}
		return ""
	}
	code := run(context.Background(), []string{"--http", "127.0.0.1:0", "--timeout", "60"}, getenv, strings.NewReader(""), &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "the bearer token (--token or SWEBOX_MCP_TOKEN) has 6 characters")
	assert.Contains(t, stderr.String(), "openssl rand -hex 32")
	assert.Empty(t, stdout.String())
}
