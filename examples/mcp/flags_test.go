package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
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
		}},
		{name: "bare port binds loopback", args: []string{"--http", ":8080"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
		}},
		{name: "explicit host kept", args: []string{"--http", "0.0.0.0:9"}, check: func(t *testing.T, c config) {
			assert.Equal(t, "0.0.0.0:9", c.HTTPAddr)
		}},
		{name: "token from the environment", token: "envtok", check: func(t *testing.T, c config) {
			assert.Equal(t, "envtok", c.Token)
		}},
		{name: "flag token wins", args: []string{"--token", "flagtok"}, token: "envtok", check: func(t *testing.T, c config) {
			assert.Equal(t, "flagtok", c.Token)
		}},
		{name: "limits", args: []string{"--memory", "512m", "--output-limit", "4k", "--timeout", "5s", "--image", "a:1,b:2", "--egress-allow", "x.org", "--egress-allow", "y.org"},
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
		{name: "no running slots", args: []string{"--max-running", "0"}, err: "--max-running"},
		{name: "label with a comma", args: []string{"--name", "a,b"}, err: "--name"},
		{name: "missing dataset", args: []string{"--dataset", "/nonexistent.jsonl"}, err: "--dataset"},
		{name: "stray argument", args: []string{"serve"}, err: "unexpected argument"},
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
