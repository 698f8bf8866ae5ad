package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/swebox/swebox/sandbox"
)

// The default image is built offline from Debian packages, as
// scripts/build-image.sh does: mmdebstrap writes a root filesystem and the
// engine imports it. When the script is at hand (a checkout of the
// repository) it is run; otherwise the same build runs from here. A test
// keeps the two package lists equal.
var (
	imagePackages = []string{"python3", "python3-pytest", "python3-pytest-xdist", "python3-venv", "python3-pip",
		"python3-setuptools", "python3-wheel", "git", "patch", "procps", "ca-certificates"}
	imageSuite   = "bookworm"
	imageChanges = []string{
		"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"ENV LANG=C.UTF-8",
		`CMD ["/bin/bash"]`,
	}
)

// mmdebstrapArgs are the arguments of the root filesystem build.
func mmdebstrapArgs() []string {
	return []string{
		"--variant=minbase", "--include=" + strings.Join(imagePackages, ","),
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		// The user the sandbox runs as (uid 1000), and git allowed in
		// workspaces owned by another uid (bind mounts).
		`--customize-hook=chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/bash sandbox`,
		`--customize-hook=chroot "$1" git config --system --add safe.directory "*"`,
		`--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*`,
		imageSuite, "-",
	}
}

// ensureDefaultImage builds image on c when it is missing, saying so on w.
func ensureDefaultImage(ctx context.Context, c *sandbox.Client, image string, w io.Writer) error {
	ok, err := c.HasImage(ctx, image)
	if err != nil || ok {
		return err
	}
	fmt.Fprintf(w, "image %s is not on %s: building it offline from Debian %s packages (mmdebstrap; a minute or two)\n", image, hostName(c), imageSuite)
	if script := findBuildScript(); script != "" {
		fmt.Fprintf(w, "running %s\n", script)
		cmd := exec.CommandContext(ctx, "bash", script, image)
		cmd.Stdout, cmd.Stderr = w, w
		cmd.Env = os.Environ()
		if h := c.Host(); h != "" {
			cmd.Env = append(cmd.Env, "DOCKER_HOST="+h)
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build image %s with %s: %w", image, script, err)
		}
		return nil
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return fmt.Errorf("image %s is missing and mmdebstrap is not installed: install it (apt-get install mmdebstrap) "+
			"and rerun, or build the image with scripts/build-image.sh from the swebox repository", image)
	}
	return importDebianImage(ctx, c, image, w)
}

// importDebianImage pipes mmdebstrap's root filesystem into the engine.
func importDebianImage(ctx context.Context, c *sandbox.Client, image string, w io.Writer) error {
	cmd := exec.CommandContext(ctx, "mmdebstrap", mmdebstrapArgs()...)
	cmd.Stderr = w
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("build image %s: %w", image, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("build image %s: start mmdebstrap: %w", image, err)
	}
	ierr := c.ImportImage(ctx, sandbox.ImportRequest{Source: out, Ref: image, Changes: imageChanges})
	if ierr != nil {
		_, _ = io.Copy(io.Discard, out) // let mmdebstrap finish writing
	}
	werr := cmd.Wait()
	if err := errors.Join(ierr, werr); err != nil {
		return fmt.Errorf("build image %s: %w", image, err)
	}
	fmt.Fprintf(w, "built %s\n", image)
	return nil
}

// findBuildScript looks for scripts/build-image.sh in the swebox checkout
// holding the working directory, "" when there is none.
func findBuildScript() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		script := filepath.Join(dir, "scripts", "build-image.sh")
		if isSweboxModule(filepath.Join(dir, "go.mod")) {
			if _, err := os.Stat(script); err == nil {
				return script
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isSweboxModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == "github.com/swebox/swebox"
		}
	}
	return false
}
