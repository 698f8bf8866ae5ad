// Package agentbin ships the exec agent's Linux binaries inside the module,
// so that a program importing sandbox has them whether it was built with
// `go run`, as a binary (also on macOS), or from a vendor directory: they
// are embedded files, built by `go generate` and checked against the source
// by a test.
package agentbin

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

//go:generate go run gen.go

var (
	//go:embed swebox-agent-linux-amd64
	amd64 []byte
	//go:embed swebox-agent-linux-arm64
	arm64 []byte
	// GoVersion is the toolchain that built the binaries.
	//go:embed GOVERSION
	GoVersion string
)

// ErrNoBinary: no agent is embedded for the architecture.
var ErrNoBinary = errors.New("no exec agent binary for this architecture")

// Binary returns the agent for a Linux architecture as Docker names it
// ("amd64", "arm64"; "x86_64" and "aarch64" are accepted too).
func Binary(arch string) ([]byte, error) {
	switch arch {
	case "amd64", "x86_64":
		return amd64, nil
	case "arm64", "aarch64":
		return arm64, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrNoBinary, arch)
}

// Install writes the agent for arch into dir, named by its content hash, and
// returns its path. A file already there is used when its content matches,
// so every program of the same version shares one copy. The file is
// readable and executable by everyone: the sandbox's user runs it.
func Install(dir, arch string) (string, error) {
	bin, err := Binary(arch)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(bin)
	path := filepath.Join(dir, "swebox-agent-"+hex.EncodeToString(sum[:8]))
	if have, err := os.ReadFile(path); err == nil && sha256.Sum256(have) == sum {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".swebox-agent-*")
	if err != nil {
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(bin); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("install exec agent: %w", err)
	}
	return path, nil
}
