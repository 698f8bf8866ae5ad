package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// selfCommand is how a person reruns this program from the same directory:
// the path it was started by, or `go run ./examples/eval` (or the package's
// import path outside the module root) when `go run` built it in a
// temporary directory that is gone once it exits. A bare "eval" becomes the
// executable's absolute path, since bash would run its builtin eval.
func selfCommand() []string {
	arg0 := os.Args[0]
	exe, err := os.Executable()
	if err != nil {
		exe = arg0
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") && strings.Contains(filepath.ToSlash(exe), "/exe/") {
		if _, err := os.Stat(filepath.Join("examples", "eval", "doc.go")); err == nil {
			return []string{"go", "run", "./examples/eval"}
		}
		return []string{"go", "run", "github.com/swebox/swebox/examples/eval"}
	}
	if arg0 == "eval" {
		return []string{exe}
	}
	return []string{arg0}
}

// shellSafe matches words that bash reads as themselves.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote joins words into a command line that bash splits back into
// the same words.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if shellSafe.MatchString(w) {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// commandLine is a pasteable command running this program with args.
func commandLine(args ...string) string {
	return shellQuote(append(selfCommand(), args...))
}
