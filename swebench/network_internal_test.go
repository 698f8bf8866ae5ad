package swebench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/spec"
)

// The lines are as the tools print them in a container without network
// (docker run --network none), or, for the ones that must not match, as
// test runners print passing tests and a test's own servers.
func TestNetworkFailureLine(t *testing.T) {
	type testCase struct {
		name, line string
		want       bool
	}
	for _, tc := range []testCase{
		{"curl", "curl: (6) Could not resolve host: example.com", true},
		{"curl connect", "curl: (7) Failed to connect to 93.184.215.14 port 443 after 0 ms: Couldn't connect to server", true},
		{"wget", "wget: unable to resolve host address 'example.com'", true},
		{"wget resolving", "Resolving example.com (example.com)... failed: Temporary failure in name resolution.", true},
		{"busybox wget", "wget: bad address 'example.com'", true},
		{"pip retry", "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f3c2a1b5e10>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/x/", true},
		{"python socket", "socket.gaierror: [Errno -2] Name or service not known", true},
		{"python unreachable", "OSError: [Errno 101] Network is unreachable", true},
		{"npm", "npm ERR! request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", true},
		{"npm code", "npm error code EAI_AGAIN", true},
		{"yarn", "info There appears to be trouble with your network connection. Retrying...", true},
		{"yarn notfound", `error An unexpected error occurred: "https://registry.yarnpkg.com/react: getaddrinfo ENOTFOUND registry.yarnpkg.com".`, true},
		{"pnpm", " ERR_PNPM_META_FETCH_FAIL  GET https://registry.npmjs.org/vitest: request to https://registry.npmjs.org/vitest failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", true},
		{"mvnw", `Exception in thread "main" java.net.UnknownHostException: repo.maven.apache.org`, true},
		{"maven transfer", "[ERROR] Plugin org.apache.maven.plugins:maven-surefire-plugin:3.2.2 or one of its dependencies could not be resolved: Failed to read artifact descriptor for org.apache.maven.plugins:maven-surefire-plugin:jar:3.2.2: The following artifacts could not be resolved: org.apache.maven.plugins:maven-surefire-plugin:pom:3.2.2 (absent): Could not transfer artifact org.apache.maven.plugins:maven-surefire-plugin:pom:3.2.2 from/to central (https://repo.maven.apache.org/maven2): repo.maven.apache.org", true},
		{"maven dependencies", "[ERROR] Failed to execute goal on project fastjson2: Could not resolve dependencies for project com.alibaba.fastjson2:fastjson2:jar:2.0.43: Failed to collect dependencies at org.junit.jupiter:junit-jupiter:jar:5.10.0", true},
		{"gradle", "   > Could not GET 'https://repo.maven.apache.org/maven2/org/junit/junit-bom/5.10.0/junit-bom-5.10.0.pom'.", true},
		{"gradle wrapper", `Exception in thread "main" java.net.UnknownHostException: services.gradle.org`, true},
		{"cargo get", "error: failed to get `serde` as a dependency of package `bytes v1.5.0 (/home/bytes)`", true},
		{"cargo spurious", "warning: spurious network error (3 tries remaining): [6] Couldn't resolve host name (Could not resolve host: index.crates.io)", true},
		{"cargo index", "error: failed to fetch `https://github.com/rust-lang/crates.io-index`", true},
		{"go proxy", `go: github.com/stretchr/testify@v1.8.4: Get "https://proxy.golang.org/github.com/stretchr/testify/@v/v1.8.4.mod": dial tcp: lookup proxy.golang.org on 127.0.0.11:53: read udp 127.0.0.1:40000->127.0.0.11:53: i/o timeout`, true},
		{"go lookup", "dial tcp: lookup sum.golang.org: no such host", true},
		{"git fetch", "fatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com", true},
		{"git ssh", "ssh: Could not resolve hostname github.com: Temporary failure in name resolution", true},
		{"git protocol", "fatal: unable to connect to github.com:", true},

		{"pytest test name", "tests/test_client.py::test_network_unreachable PASSED                     [ 50%]", false},
		{"pytest resolution test", "tests/test_dns.py::test_temporary_failure_in_name_resolution PASSED", false},
		{"go test own server", "    server_test.go:42: dial tcp 127.0.0.1:8080: connect: connection refused", false},
		{"go env", `GOPROXY='https://proxy.golang.org,direct'`, false},
		{"go lookup localhost", "dial tcp: lookup localhost: no such host", false},
		{"curl own server", "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused", false},
		{"requests own server", "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=5000): Max retries exceeded with url: / (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))", false},
		{"maven missing artifact", "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project com.x:app:jar:1.0: Could not find artifact com.x:nope:jar:9.9 in central (https://repo.maven.apache.org/maven2)", false},
		{"automake", "PASS: tests/network.test", false},
		{"cargo test name", "test net::tests::resolves_host_names ... ok", false},
		{"jest", "  ✓ reports when the network is unreachable (3 ms)", false},
		{"failed to connect, not a host", "Failed to connect to the database: authentication failed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, networkFailureLine(tc.line), tc.line)
		})
	}
}

func TestFindNetworkAttempt(t *testing.T) {
	log := "+ cd /home/jq\nPASS: tests/network.test\nfatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com\ncurl: (6) Could not resolve host: example.com\n"
	a, ok := findNetworkAttempt([]byte(log))
	require.True(t, ok)
	assert.Equal(t, networkAttempt{Line: 3, Text: "fatal: unable to access 'https://github.com/jqlang/jq/': Could not resolve host: github.com"}, a)

	long := strings.Repeat("x", 100<<10) + " Could not resolve host: example.com " + strings.Repeat("y", 1000)
	a, ok = findNetworkAttempt([]byte("first\n" + long))
	require.True(t, ok, "a line longer than the scanner's first buffer")
	assert.Equal(t, 2, a.Line)
	assert.Len(t, a.Text, networkLineLimit+len("…"))

	_, ok = findNetworkAttempt([]byte("PASS: tests/add.test\nFAIL: tests/mul.test\n"))
	assert.False(t, ok)
	_, ok = findNetworkAttempt(nil)
	assert.False(t, ok)
}

// checkNetwork leaves a resolved instance, and an instance of the official
// procedure, graded whatever the log shows; a family procedure's
// unresolved instance with a failed network attempt is a
// *NeedsNetworkError naming the family, the log and the line.
func TestCheckNetwork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test_output.txt")
	require.NoError(t, os.WriteFile(path, []byte("cargo test\n    Updating crates.io index\nwarning: spurious network error (2 tries remaining): [6] Couldn't resolve host name (Could not resolve host: index.crates.io)\n"), 0o644))
	e := &evaluator{}
	inst := dataset.Instance{InstanceID: "tokio-rs__bytes-1", Repo: "tokio-rs/bytes"}
	family := spec.TestSpec{Run: spec.Procedure{Workdir: "/home"}}
	official := spec.TestSpec{}

	assert.NoError(t, e.checkNetwork(inst, family, grade.InstanceReport{Resolved: true}, path))
	assert.NoError(t, e.checkNetwork(inst, official, grade.InstanceReport{}, path))
	err := e.checkNetwork(inst, family, grade.InstanceReport{}, path)
	require.ErrorIs(t, err, ErrNeedsNetwork)
	var nn *NeedsNetworkError
	require.True(t, errors.As(err, &nn))
	assert.Equal(t, 3, nn.Line)
	assert.Equal(t, "test_output.txt", nn.Log)
	assert.Contains(t, err.Error(), "test_output.txt line 3")
	assert.Contains(t, err.Error(), "runs the tests with the network")
	assert.Equal(t, OutcomeNeedsNetwork, outcomeOf(&InstanceResult{Status: StatusError, Err: err}))
	assert.True(t, OutcomeNeedsNetwork.Infrastructure())

	require.NoError(t, os.WriteFile(path, []byte("FAIL: tests/add.test\n"), 0o644))
	assert.NoError(t, e.checkNetwork(inst, family, grade.InstanceReport{}, path))
}
