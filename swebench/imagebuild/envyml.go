package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"sync"
)

// envYMLV410 holds the environment.yml files that SWE-bench v4.1.0 ships
// in swebench/resources/swebench-og/<owner__name>/<number>/ (the
// SWE-bench Verified instances), as testdata/upstream/generate.py packs
// them.
//
//go:embed envyml_v410.tar.gz
var envYMLV410 []byte

var bundled = sync.OnceValues(func() (map[string]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(envYMLV410))
	if err != nil {
		return nil, fmt.Errorf("bundled environment.yml files: %w", err)
	}
	out := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bundled environment.yml files: %w", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("bundled environment.yml files: %s: %w", h.Name, err)
		}
		out[h.Name] = string(data)
	}
})

// cachedEnvironmentYML is load_cached_environment_yml: the bundled file of
// the instance (its id split at the last "-" into repository and number),
// read as Python's read_text reads it (universal newlines).
func cachedEnvironmentYML(instanceID string) (string, bool, error) {
	i := strings.LastIndex(instanceID, "-")
	if i < 0 {
		return "", false, nil
	}
	m, err := bundled()
	if err != nil {
		return "", false, err
	}
	s, ok := m["swebench-og/"+instanceID[:i]+"/"+instanceID[i+1:]+"/environment.yml"]
	if !ok {
		return "", false, nil
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n"), true, nil
}
