package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/secrets"
	"github.com/swebox/swebox/internal/testenv"
	"github.com/swebox/swebox/sandbox"
)

const (
	tokenValue = "tok-9f8e7d6c5b4a"
	// A value a shell would mangle, with a trailing newline to keep.
	awkwardValue = "line one\nit's \"$HOME\" `x`\n"
)

var testSecrets = secrets.Static{"team/token": tokenValue, "team/awkward": awkwardValue, "call/only": "per-call-0xdeadbeef"}

// inspectJSON is everything docker inspect shows about a container.
func inspectJSON(t testing.TB, c *sandbox.Client, id string) string {
	t.Helper()
	info, err := testenv.Docker(t, c).ContainerInspect(context.Background(), id)
	require.NoError(t, err)
	b, err := json.Marshal(info)
	require.NoError(t, err)
	return string(b)
}

func TestSessionSecrets(t *testing.T) {
	m, c := newManager(t, agent.WithSecretResolver(testSecrets))
	s := createT(t, m, "secret", agent.SessionOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"API_TOKEN": "team/token", "AWKWARD": "team/awkward"}}})

	ins := inspectJSON(t, c, s.Info().Container)
	assert.NotContains(t, ins, tokenValue, "docker inspect must not show the secret")
	assert.Contains(t, ins, "Tmpfs", "sanity: this is the inspect document")

	sum := sha256.Sum256([]byte(awkwardValue))
	code := `import hashlib, os, sys
t = os.environ['API_TOKEN']
print('token is', t)
print('to stderr', t, file=sys.stderr)
a = os.environ['AWKWARD']
print(len(a), hashlib.sha256(a.encode()).hexdigest())
print(oct(os.stat('/tmp/.swebox/secrets/API_TOKEN').st_mode & 0o777))
raise ValueError('bad token ' + t)
`
	res := sessionPythonT(t, s, code, agent.ExecOptions{})
	assert.Equal(t, fmt.Sprintf("token is ***\n%d %s\n0o400\n", len(awkwardValue), hex.EncodeToString(sum[:])), res.Stdout.String())
	assert.Contains(t, res.Stderr.String(), "to stderr ***")
	assert.NotContains(t, res.Stderr.String(), tokenValue)
	require.NotNil(t, res.Error)
	assert.Equal(t, "bad token ***", res.Error.Message)

	// A per-call secret is there for that call only.
	res = sessionPythonT(t, s, "import os; print(os.environ['ONCE'])", agent.ExecOptions{Secrets: map[string]string{"ONCE": "call/only"}})
	assert.Equal(t, "***\n", res.Stdout.String())
	res = sessionPythonT(t, s, "import os; print(os.environ.get('ONCE'), sorted(os.listdir('/tmp/.swebox')))", agent.ExecOptions{})
	assert.Equal(t, "None ['secrets']\n", res.Stdout.String())
	assert.NotContains(t, inspectJSON(t, c, s.Info().Container), "per-call-0xdeadbeef")
}

func TestOneShotSecrets(t *testing.T) {
	m, c := newManager(t, agent.WithSecretResolver(testSecrets))
	ctx := context.Background()
	// Inspect the container while the program runs. No require here: this
	// is not the test's goroutine.
	inspected := make(chan string, 1)
	dc := testenv.Docker(t, c)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			cs, err := dc.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelSession+"="+c.Session()))})
			if err == nil && len(cs) > 0 {
				if info, err := dc.ContainerInspect(ctx, cs[0].ID); err == nil && info.State != nil && info.State.Running {
					b, _ := json.Marshal(info)
					inspected <- string(b)
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		inspected <- ""
	}()
	res, err := m.RunPython(ctx, "import os, time\nprint(os.environ['TOKEN'])\ntime.sleep(3)", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"TOKEN": "team/token"}}})
	require.NoError(t, err)
	assert.Equal(t, "***\n", res.Stdout.String())
	ins := <-inspected
	require.NotEmpty(t, ins, "the container was seen while it ran")
	assert.NotContains(t, ins, tokenValue)

	_, err = m.RunPython(ctx, "", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"X": "no/such"}}})
	require.ErrorIs(t, err, secrets.ErrNotFound)
	plain, _ := newManager(t)
	_, err = plain.RunPython(ctx, "", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"X": "team/token"}}})
	require.ErrorIs(t, err, agent.ErrNoResolver)
}

func TestSecretMaskedInTruncatedOutput(t *testing.T) {
	m, _ := newManager(t, agent.WithSecretResolver(testSecrets))
	// The token straddles the point where the kept head ends.
	res := runPythonT(t, m, "import os\nprint('x' * 45 + os.environ['T'] + 'y' * 200)", agent.RunOptions{SandboxOptions: agent.SandboxOptions{Secrets: map[string]string{"T": "team/token"}}, OutputLimit: 100})
	require.True(t, res.Stdout.Truncated)
	out := string(res.Stdout.Head) + string(res.Stdout.Tail)
	for i := 4; i <= len(tokenValue); i++ {
		for j := 0; j+i <= len(tokenValue); j++ {
			if strings.Contains(out, tokenValue[j:j+i]) {
				t.Fatalf("output holds %q of the secret: %q", tokenValue[j:j+i], out)
			}
		}
	}
}
