//go:build ignore

// gen builds the exec agent for every architecture the package embeds:
//
//	go generate ./sandbox/internal/agentbin
//
// The flags make the build reproducible, so a test can rebuild the binaries
// from source and check that the committed ones match it byte for byte.
// With -out DIR it writes there instead of next to this file.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

const pkg = "github.com/swebox/swebox/sandbox/internal/execagent/cmd/swebox-agent"

func main() {
	out := flag.String("out", ".", "directory to write the binaries to")
	flag.Parse()
	for _, arch := range []string{"amd64", "arm64"} {
		dst, err := filepath.Abs(filepath.Join(*out, "swebox-agent-linux-"+arch))
		if err != nil {
			fail(err)
		}
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", dst, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=mod")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("build for %s: %w", arch, err))
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "GOVERSION"), []byte(strings.TrimSpace(runtime.Version())+"\n"), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}
