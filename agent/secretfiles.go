package agent

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/swebox/swebox/sandbox"
)

// resolveSecrets maps environment variable names to secret values.
func (m *Manager) resolveSecrets(ctx context.Context, want map[string]string) (map[string]string, error) {
	if len(want) == 0 {
		return nil, nil
	}
	if m.resolver == nil {
		return nil, fmt.Errorf("resolve secrets: %w (use WithSecretResolver)", ErrNoResolver)
	}
	vals := make(map[string]string, len(want))
	for env, name := range want {
		v, err := m.resolver.Resolve(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("resolve secret %q for %s: %w", name, env, err)
		}
		vals[env] = v
	}
	return vals, nil
}

// secretsDir is where a sandbox keeps its secrets ("secrets") or one
// command's ("secrets-<run id>", which the wrapper deletes after reading).
func secretsDir(name string) string { return path.Join(secretsRoot, name) }

// copySecrets writes vals as files named by their variables into
// /tmp/.swebox/<dir> in the sandbox: readable by its user only, on the /tmp
// tmpfs, so the values touch neither the host's disk nor the container's
// configuration.
func copySecrets(ctx context.Context, sb *sandbox.Sandbox, dir string, vals map[string]string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdrs := []*tar.Header{
		{Name: path.Base(secretsRoot) + "/", Typeflag: tar.TypeDir, Mode: 0o700},
		{Name: path.Base(secretsRoot) + "/" + dir + "/", Typeflag: tar.TypeDir, Mode: 0o700},
	}
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write secrets: %w", err)
		}
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := vals[k]
		h := &tar.Header{Name: path.Base(secretsRoot) + "/" + dir + "/" + k, Typeflag: tar.TypeReg, Mode: 0o400, Size: int64(len(v))}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write secrets: %w", err)
		}
		if _, err := tw.Write([]byte(v)); err != nil {
			return fmt.Errorf("write secrets: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write secrets: %w", err)
	}
	if _, err := sb.CopyIn(ctx, sandbox.CopyInRequest{Tar: &buf, Dest: path.Dir(secretsRoot)}); err != nil {
		return fmt.Errorf("copy secrets into sandbox: %w", err)
	}
	return nil
}

// masker replaces secret values in text with "***".
type masker struct {
	values []string // longest first, so a secret containing another is masked whole
}

func newMasker(sets ...map[string]string) masker {
	var mk masker
	for _, set := range sets {
		for _, v := range set {
			if v != "" && !slices.Contains(mk.values, v) {
				mk.values = append(mk.values, v)
			}
		}
	}
	sort.Slice(mk.values, func(i, j int) bool { return len(mk.values[i]) > len(mk.values[j]) })
	return mk
}

const maskText = "***"

func (mk masker) bytes(b []byte) []byte {
	for _, v := range mk.values {
		b = bytes.ReplaceAll(b, []byte(v), []byte(maskText))
	}
	return b
}

func (mk masker) string(s string) string {
	for _, v := range mk.values {
		s = strings.ReplaceAll(s, v, maskText)
	}
	return s
}

// output masks both kept parts of a stream. Total still counts the bytes the
// program wrote. Where the stream was truncated, the end of Head that starts
// a secret and the start of Tail that ends one are masked too (at the price
// of masking a few innocent bytes at the cut).
func (mk masker) output(o sandbox.Output) sandbox.Output {
	if len(mk.values) == 0 {
		return o
	}
	o.Head = mk.bytes(o.Head)
	o.Tail = mk.bytes(o.Tail)
	if !o.Truncated {
		return o
	}
	for _, v := range mk.values {
		for k := len(v) - 1; k > 0; k-- {
			if bytes.HasSuffix(o.Head, []byte(v[:k])) {
				o.Head = append(o.Head[:len(o.Head)-k:len(o.Head)-k], maskText...)
				break
			}
		}
		for k := len(v) - 1; k > 0; k-- {
			if bytes.HasPrefix(o.Tail, []byte(v[len(v)-k:])) {
				o.Tail = append([]byte(maskText), o.Tail[k:]...)
				break
			}
		}
	}
	return o
}
