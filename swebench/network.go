package swebench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/spec"
)

// The harnesses of Multi-SWE-bench, SWE-bench Pro, SWE-PolyBench and
// SWE-smith run their tests in containers with Docker's default network
// (Pro's --block_network is off by default); every row whose procedure is
// not the official one (spec.Procedure.Official) is one of theirs. The
// sandbox has no network. A test run that tried to download (a Maven
// wrapper, cargo fetching crates, NodeBB's npm install) fails here where it
// may have passed there, and grading that log would blame the model for the
// machine. So an instance of such a family that would be graded not
// resolved, whose log shows a network attempt that failed, is an error
// instance, ErrNeedsNetwork, with no verdict. A resolved instance stays
// resolved: the attempt did not matter. The official SWE-bench procedure is
// left as it is: its images are built to run offline.

// ErrNeedsNetwork: the tests of a family whose harness runs them with the
// network tried it in the sandbox, which has none, and the instance would
// have been graded not resolved. A *NeedsNetworkError matches it.
var ErrNeedsNetwork = errors.New("the tests needed the network")

// NeedsNetworkError names the first log line that shows a failed network
// attempt.
type NeedsNetworkError struct {
	Family string // the family's title, e.g. "Multi-SWE-bench"
	Log    string // the log's file name, test_output.txt
	Line   int    // 1-based
	Text   string // the line, capped at networkLineLimit bytes
}

func (e *NeedsNetworkError) Error() string {
	return fmt.Sprintf("%s line %d shows a failed network attempt: %q; %s's harness runs the tests with the network and the sandbox has none, so the instance is not graded", e.Log, e.Line, e.Text, e.Family)
}

func (e *NeedsNetworkError) Unwrap() error { return ErrNeedsNetwork }

// networkLineLimit caps the line a NeedsNetworkError quotes.
const networkLineLimit = 300

// networkRule is a set of phrases, any of which on a line shows a failed
// network attempt when the line also holds one of also (if any are given)
// and none of unless.
type networkRule struct {
	any, also, unless []string
}

// loopback are hosts a test's own server listens on: a failed connection
// to them is the test's, not the network's.
var loopback = []string{"localhost", "127.0.0.1", "[::1]", "0.0.0.0"}

// networkRules are the messages of the common tools when a host name does
// not resolve or a connection finds no route, as they print them
// (case-sensitive, so that a test named test_network_unreachable is no
// match).
var networkRules = []networkRule{
	// The C library's resolver (glibc's gai_strerror), through curl, wget,
	// git, ssh, pip and Python's socket module.
	{any: []string{"Temporary failure in name resolution", "Name or service not known", "No address associated with hostname",
		"Could not resolve host", "Couldn't resolve host", "unable to resolve host address", "Network is unreachable", "ENETUNREACH"}},
	// Node.js (npm, yarn, pnpm).
	{any: []string{"getaddrinfo EAI_AGAIN", "getaddrinfo ENOTFOUND", "code EAI_AGAIN", "code ENOTFOUND",
		"There appears to be trouble with your network connection", "ERR_PNPM_META_FETCH_FAIL"}},
	// Java (the Maven and Gradle wrappers' downloads, Maven, Gradle). A
	// dependency that does not exist is the patch's failure.
	{any: []string{"java.net.UnknownHostException", "Could not transfer artifact", "Could not resolve dependencies",
		"Could not GET '", "Could not HEAD '", "Could not get resource '"}, unless: []string{"Could not find artifact"}},
	// cargo.
	{any: []string{"spurious network error", "failed to get `", "failed to fetch `", "failed to download from `",
		"failed to query replaced source registry"}},
	// Go: a name lookup, or a module download (go env's GOPROXY=... line
	// is no match).
	{any: []string{"dial tcp: lookup "}, unless: []string{"lookup localhost"}},
	{any: []string{"proxy.golang.org", "sum.golang.org"}, also: []string{"dial tcp", "no such host", "i/o timeout", "network is unreachable"}},
	// Connections that found no server (curl's exit 7, git's git://).
	{any: []string{"curl: (6)", "curl: (7)", "fatal: unable to connect to ", "wget: bad address"}, unless: loopback},
	{any: []string{"Failed to connect to "}, also: []string{" port "}, unless: loopback},
}

// networkAttempt is the first line of a log that shows a failed network
// attempt.
type networkAttempt struct {
	Line int // 1-based
	Text string
}

// findNetworkAttempt returns the first line of log that shows a failed
// network attempt; ok is false when none does.
func findNetworkAttempt(log []byte) (a networkAttempt, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), len(log)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if networkFailureLine(line) {
			line = strings.TrimSpace(line)
			if len(line) > networkLineLimit {
				line = line[:networkLineLimit] + "…"
			}
			return networkAttempt{Line: n, Text: line}, true
		}
	}
	return networkAttempt{}, false
}

// networkFailureLine reports whether one line of a log shows a failed
// network attempt.
func networkFailureLine(line string) bool {
	for _, r := range networkRules {
		if containsAny(line, r.any) && (r.also == nil || containsAny(line, r.also)) && !containsAny(line, r.unless) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// checkNetwork is the error of an instance graded not resolved whose family
// runs its tests with the network (a procedure other than the official
// one) and whose log at path shows a failed network attempt; nil
// otherwise.
func (e *evaluator) checkNetwork(inst dataset.Instance, ts spec.TestSpec, report grade.InstanceReport, path string) error {
	if ts.Run.Official() || report.Resolved {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the log for network attempts: %w", err)
	}
	a, ok := findNetworkAttempt(b)
	if !ok {
		return nil
	}
	title := "the family"
	if fam, _, err := e.cfg.familyOf(inst); err == nil && fam != nil {
		title = fam.Title
	}
	return &NeedsNetworkError{Family: title, Log: "test_output.txt", Line: a.Line, Text: a.Text}
}
