package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// selfCommand is how a person reruns this program from the same directory:
// the path it was started by, or `go run ./examples/eval` (or the package's
// import path outside the module root) when `go run` built it, in a
// temporary directory or in the build cache, neither of them a path to
// give a person. A bare "eval" becomes the
// executable's absolute path, since bash would run its builtin eval.
func selfCommand() []string {
	arg0 := os.Args[0]
	exe, err := os.Executable()
	if err != nil {
		exe = arg0
	}
	if builtByGoRun(exe) {
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

// builtByGoRun reports whether exe is a binary `go run` built: in a
// temporary go-build directory, or (Go 1.24 and later) in the build cache.
func builtByGoRun(exe string) bool {
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return true
	}
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return false
		}
		cache = filepath.Join(dir, "go-build")
	}
	return strings.HasPrefix(exe, cache+string(os.PathSeparator))
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
