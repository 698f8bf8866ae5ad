package grade_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/internal/cienv"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// decodeCases are byte strings with every kind of invalid UTF-8, and what
// Python's bytes.decode("utf-8", errors="replace") makes of them.
var decodeCases = []struct{ in, want string }{
	{"plain ascii", "plain ascii"},
	{"caf\xc3\xa9", "café"},
	{"a\xffb", "a\ufffdb"},
	{"a\xe2\x82b", "a\ufffdb"},             // truncated 3-byte sequence: one U+FFFD
	{"a\xe2\x82", "a\ufffd"},               // truncated at the end
	{"\xf0\x9f\x98", "\ufffd"},             // truncated 4-byte sequence
	{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, // surrogate: each byte
	{"\xe0\x80\xaf", "\ufffd\ufffd\ufffd"}, // overlong
	{"\xc0\xaf", "\ufffd\ufffd"},
	{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"}, // above U+10FFFF
	{"\xf5x", "\ufffdx"},
	{"ok \ufffd kept", "ok \ufffd kept"},
	{"\x80\x80", "\ufffd\ufffd"},
}

func TestDecodeOutput(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(hex.EncodeToString([]byte(tc.in)), func(t *testing.T) {
			got, err := grade.DecodeOutput([]byte(tc.in), harness.V5)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			_, err = grade.DecodeOutput([]byte(tc.in), harness.V4)
			if strings.ToValidUTF8(tc.in, "") == tc.in {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, grade.ErrInvalidUTF8)
			}
		})
	}
}

// TestDecodeOutputMatchesPython checks the table above against Python.
func TestDecodeOutputMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		cienv.Skip(t, "python3 not found")
	}
	var hexes []string
	for _, tc := range decodeCases {
		hexes = append(hexes, hex.EncodeToString([]byte(tc.in)))
	}
	in, err := json.Marshal(hexes)
	require.NoError(t, err)
	cmd := exec.Command(python, "-c", "import json,sys; json.dump([bytes.fromhex(h).decode('utf-8', errors='replace') for h in json.load(sys.stdin)], sys.stdout)")
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	require.NoError(t, err)
	var want []string
	require.NoError(t, json.Unmarshal(out, &want))
	for i, tc := range decodeCases {
		assert.Equal(t, want[i], tc.want, "case %q", tc.in)
	}
}

func FuzzDecodeOutput(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := grade.DecodeOutput(raw, harness.V5)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8Valid(s) {
			t.Fatalf("invalid UTF-8 out of %q", raw)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }

func TestClassifyFailure(t *testing.T) {
	type testCase struct {
		log, reason string
		tier        grade.Tier
	}
	for _, tc := range []testCase{
		{"Error: Failed to launch the browser process!\nNo usable sandbox!", grade.BrowserLaunchFailed, grade.TierEnvironment},
		{"Error: cannot open display: :99", grade.DisplayUnavailable, grade.TierEnvironment},
		{"+ pytest\nKilled\n", grade.OutOfMemory, grade.TierEnvironment},
		{"Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space", grade.OutOfMemory, grade.TierEnvironment},
		{"Error response from daemon: No such container: x", grade.ContainerUnavailable, grade.TierEnvironment},
		{"collected 0 items\n\nTimeout error: 1800 seconds exceeded.", grade.NoTestsCollected, grade.TierAmbiguous},
		{"curl: (6) Could not resolve host: example.com", grade.NetworkUnreachable, grade.TierEnvironment},
		{"E   ModuleNotFoundError: No module named 'numpy'", grade.MissingModule, grade.TierAmbiguous},
		{"collected 0 items\n\n===== no tests ran in 0.01s =====", grade.NoTestsCollected, grade.TierAmbiguous},
		{"\n\nTimeout error: 1800 seconds exceeded.", grade.TestsTimedOut, grade.TierAmbiguous},
		{"FAILED t.py::a - assert 1 == 2", "", grade.TierAmbiguous},
		// 5.0.2's signatures know neither of these.
		{"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "", grade.TierAmbiguous},
		{"Process Killed by signal 9", "", grade.TierAmbiguous},
	} {
		t.Run(tc.reason+"/"+tc.log, func(t *testing.T) {
			assert.Equal(t, tc.reason, grade.ClassifyFailure(tc.log))
			assert.Equal(t, tc.tier, grade.FailureTier(tc.reason))
		})
	}
}
