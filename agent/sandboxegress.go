package agent

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/sandbox"
)

// SandboxEgress lets commands in a sandbox that no Manager made (a
// SWE-bench task's, say) reach an egress proxy, as a Manager's sandboxes
// do: Apply mounts the proxy's socket and the launcher into the spec, and
// Command wraps a command in the launcher, which, while the command runs,
// relays 127.0.0.1 to the socket and points HTTP_PROXY and HTTPS_PROXY at
// the relay. The launcher needs python3 on the image's PATH.
type SandboxEgress struct {
	px  *egress.Proxy
	lib string
}

// NewSandboxEgress writes the launcher into dir (created if missing, made
// readable by the sandbox's user) for sandboxes that use px. The caller
// closes px and removes dir.
func NewSandboxEgress(px *egress.Proxy, dir string) (*SandboxEgress, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox egress: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox egress: %w", err)
	}
	b, err := scripts.ReadFile("scripts/launch.py")
	if err != nil {
		return nil, fmt.Errorf("sandbox egress: read embedded launcher: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "launch.py"), b, 0o644); err != nil {
		return nil, fmt.Errorf("sandbox egress: %w", err)
	}
	return &SandboxEgress{px: px, lib: dir}, nil
}

// Apply mounts the proxy's socket directory and the launcher, read-only.
func (e *SandboxEgress) Apply(spec *sandbox.Spec) {
	spec.Mounts = append(spec.Mounts,
		sandbox.Mount{Source: e.px.Dir(), Target: egressTarget, ReadOnly: true},
		sandbox.Mount{Source: e.lib, Target: libTarget, ReadOnly: true})
}

// launchWithEgress runs the launcher on "$@" with the proxy's socket in
// its environment, or says why it cannot (exit 127, as a missing command).
const launchWithEgress = `command -v python3 >/dev/null 2>&1 || { echo "swebox: egress needs python3 on the image's PATH for its relay" >&2; exit 127; }
export ` + egressEnv + `="$0"
exec python3 -I -S ` + libTarget + `/launch.py /dev/null "$@"`

// Command returns argv run by the launcher, with the proxy's socket named
// in its environment. The launcher's resource figures go to /dev/null.
func (e *SandboxEgress) Command(argv []string) []string {
	return append([]string{"/bin/sh", "-c", launchWithEgress, path.Join(egressTarget, egress.SocketName)}, argv...)
}
