package logparse_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
)

// FuzzParsers runs a parser (picked by the first argument) under both rule
// sets: none may panic, and the only error is one where the official
// parser raises.
func FuzzParsers(f *testing.F) {
	names := logparse.Names()
	captures, _ := filepath.Glob("testdata/captures/*.log")
	for i, path := range captures {
		if raw, err := os.ReadFile(path); err == nil {
			f.Add(uint8(i), string(raw))
		}
	}
	for i, s := range fragments {
		f.Add(uint8(i), s)
	}
	for i := range names {
		f.Add(uint8(i), "FAILED\nFAIL:\n PASSED \n  a\n b\n✔ x\nStarting browser\n    a\n  ✔ b\n ./node_modules/.bin/jest \n✓ x\n")
	}
	f.Fuzz(func(t *testing.T, which uint8, log string) {
		for _, name := range []string{names[int(which)%len(names)]} {
			for _, rules := range []harness.Rules{harness.V4, harness.V5} {
				m, err := logparse.Parse(name, log, rules)
				if err != nil {
					if !errors.Is(err, logparse.ErrParserRaised) {
						t.Fatalf("%s/%s: unexpected error %v", name, rules, err)
					}
					continue
				}
				if m == nil {
					t.Fatalf("%s/%s: nil map without error", name, rules)
				}
			}
		}
	})
}
