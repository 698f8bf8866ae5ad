// Package hubtest serves datasets over the Hugging Face Hub's Parquet API
// from a local httptest server, for tests of code that loads datasets by
// name (point HF_ENDPOINT or hub.WithEndpoint at Server.URL).
//
// It answers, as the Hub does:
//
//	GET /api/datasets/{owner}/{name}/parquet/{config}/{split}  JSON list of file URLs
//	GET /api/datasets/{owner}/{name}/parquet/{config}          JSON object split -> URLs
//	GET /files/{owner}/{name}/{config}/{split}/{n}.parquet     the file, with an ETag
//
// Every response carries an ETag and a matching If-None-Match gets 304.
// With a token set, requests without "Authorization: Bearer <token>" get
// 401, as the Hub answers for private repositories.
package hubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is one request the server received.
type Request struct {
	Path          string
	Authorization string
	IfNoneMatch   string
	Status        int
}

// Server is a local Hub.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	splits   map[string]map[string][][]byte // "owner/name/config" -> split -> files
	token    string
	fail     int
	requests []Request
}

// NewServer starts a server that is closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{splits: map[string]map[string][][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// SetSplit serves files as the Parquet files of name's split in config
// "default", replacing what was served before.
func (s *Server) SetSplit(name, split string, files ...[]byte) {
	s.SetConfigSplit(name, "default", split, files...)
}

// SetConfigSplit serves files as the Parquet files of name's split in
// config, replacing what was served before.
func (s *Server) SetConfigSplit(name, config, split string, files ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := name + "/" + config
	if s.splits[key] == nil {
		s.splits[key] = map[string][][]byte{}
	}
	s.splits[key][split] = files
}

// RequireToken makes every request need "Authorization: Bearer token".
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// FailWith makes every request answer with HTTP status code (0 restores
// normal answers), as the Hub does in an outage (502, 503).
func (s *Server) FailWith(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = code
}

// Requests returns the requests received so far and forgets them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), IfNoneMatch: r.Header.Get("If-None-Match")}
	status := s.respond(w, r)
	rec.Status = status
	s.requests = append(s.requests, rec)
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request) int {
	if s.fail != 0 {
		http.Error(w, http.StatusText(s.fail), s.fail)
		return s.fail
	}
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		http.Error(w, `{"error":"Invalid username or password."}`, http.StatusUnauthorized)
		return http.StatusUnauthorized
	}
	send := func(body []byte, contentType string) int {
		tag := etag(body)
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
		return http.StatusOK
	}
	notFound := func() int {
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/datasets/"):
		parts := strings.Split(strings.TrimPrefix(p, "/api/datasets/"), "/")
		if len(parts) < 4 || parts[2] != "parquet" {
			return notFound()
		}
		key := parts[0] + "/" + parts[1] + "/" + parts[3]
		splits, ok := s.splits[key]
		if !ok {
			return notFound()
		}
		urls := func(split string) []string {
			var out []string
			for i := range splits[split] {
				out = append(out, fmt.Sprintf("%s/files/%s/%s/%04d.parquet", s.URL, key, split, i))
			}
			return out
		}
		switch len(parts) {
		case 4:
			all := map[string][]string{}
			for split := range splits {
				all[split] = urls(split)
			}
			body, _ := json.Marshal(all)
			return send(body, "application/json")
		case 5:
			if _, ok := splits[parts[4]]; !ok {
				return notFound()
			}
			body, _ := json.Marshal(urls(parts[4]))
			return send(body, "application/json")
		}
		return notFound()
	case strings.HasPrefix(p, "/files/"):
		parts := strings.Split(strings.TrimPrefix(p, "/files/"), "/")
		if len(parts) != 5 {
			return notFound()
		}
		files := s.splits[parts[0]+"/"+parts[1]+"/"+parts[2]][parts[3]]
		var n int
		if _, err := fmt.Sscanf(parts[4], "%04d.parquet", &n); err != nil || n < 0 || n >= len(files) {
			return notFound()
		}
		return send(files[n], "application/octet-stream")
	}
	return notFound()
}
