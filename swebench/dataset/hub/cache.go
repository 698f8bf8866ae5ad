package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The cache holds, under its directory:
//
//	lists/<owner>/<name>/<config>/<split>.json  the split's file list and its ETag
//	files/<sha256 of the URL>.json              a file's ETag and the blob holding it
//	blobs/<sha256 of the content>               file contents
//
// Every write is a temporary file renamed into place, and entries point at
// blobs by content, so concurrent runs never see a half-written file or an
// ETag that belongs to other bytes: the worst a race does is download twice.
type cache struct{ dir string }

// listEntry is a split's cached file list.
type listEntry struct {
	URL     string    `json:"url"`
	ETag    string    `json:"etag,omitempty"`
	Files   []string  `json:"files"`
	Fetched time.Time `json:"fetched"`
}

// fileEntry is a cached file.
type fileEntry struct {
	URL     string    `json:"url"`
	ETag    string    `json:"etag,omitempty"`
	Blob    string    `json:"blob"` // sha256 of the content, hex
	Size    int64     `json:"size"`
	Fetched time.Time `json:"fetched"`
}

func (c cache) listPath(name, config, split string) string {
	return filepath.Join(c.dir, "lists", filepath.FromSlash(name), config, split+".json")
}

func (c cache) filePath(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.dir, "files", hex.EncodeToString(sum[:])+".json")
}

func (c cache) blobPath(sum string) string { return filepath.Join(c.dir, "blobs", sum) }

// readJSON reads a cache entry; a missing or unreadable entry is a miss.
func readJSON[T any](path string) (T, bool) {
	var v T
	data, err := os.ReadFile(path)
	if err != nil {
		return v, false
	}
	if json.Unmarshal(data, &v) != nil {
		return v, false
	}
	return v, true
}

func (c cache) list(name, config, split string) (listEntry, bool) {
	e, ok := readJSON[listEntry](c.listPath(name, config, split))
	return e, ok && len(e.Files) > 0
}

// file returns the entry of url when its blob is present with the right
// size.
func (c cache) file(url string) (fileEntry, bool) {
	e, ok := readJSON[fileEntry](c.filePath(url))
	if !ok || e.Blob == "" {
		return e, false
	}
	st, err := os.Stat(c.blobPath(e.Blob))
	return e, err == nil && st.Size() == e.Size
}

func (c cache) putList(name, config, split string, e listEntry) error {
	return writeJSONAtomic(c.listPath(name, config, split), e)
}

func (c cache) putFile(e fileEntry) error { return writeJSONAtomic(c.filePath(e.URL), e) }

// dropFile forgets a file (its blob is left for other entries that share
// it), so the next load downloads it again.
func (c cache) dropFile(url string) {
	_ = os.Remove(c.filePath(url))
}

// putBlob copies r, which must hold at most limit bytes, into the blob
// store and returns its sha256 and size.
func (c cache) putBlob(r io.Reader, limit int64) (sum string, size int64, err error) {
	dir := filepath.Join(c.dir, "blobs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, limit+1))
	if err == nil && size > limit {
		err = kindf(ErrTooLarge, "file of more than the %d bytes allowed", limit)
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cache: %w", cerr)
	}
	if err != nil {
		return "", 0, err
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if err := os.Rename(tmp.Name(), c.blobPath(sum)); err != nil {
		return "", 0, fmt.Errorf("cache: %w", err)
	}
	return sum, size, nil
}

// writeJSONAtomic writes v to path through a temporary file and a rename.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}
