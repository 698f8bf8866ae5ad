package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// blobScheme is the URI prefix of content the server keeps for
// resources/read: artifacts and files too large to inline.
const blobScheme = "swebox://blob/"

// store keeps content by random id for its owner, within a byte budget; the
// oldest goes first when it is full.
type store struct {
	mu    sync.Mutex
	limit int64
	size  int64
	order []string
	blobs map[string]*blob
}

type blob struct {
	owner, name, mime string
	data              []byte
}

func newStore(limit int64) *store { return &store{limit: limit, blobs: map[string]*blob{}} }

func randomID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return prefix + hex.EncodeToString(b)
}

// put keeps data and returns its URI; false when it is larger than the whole
// budget.
func (s *store) put(owner, name, mime string, data []byte) (string, bool) {
	n := int64(len(data))
	if n > s.limit {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.size+n > s.limit && len(s.order) > 0 {
		old := s.order[0]
		s.order = s.order[1:]
		if b, ok := s.blobs[old]; ok {
			s.size -= int64(len(b.data))
			delete(s.blobs, old)
		}
	}
	id := randomID("b")
	s.blobs[id] = &blob{owner: owner, name: name, mime: mime, data: data}
	s.order = append(s.order, id)
	s.size += n
	return blobScheme + id + "/" + url.PathEscape(name), true
}

// get returns the blob of uri if owner owns it.
func (s *store) get(owner, uri string) (*blob, bool) {
	rest, ok := strings.CutPrefix(uri, blobScheme)
	if !ok {
		return nil, false
	}
	id, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[id]
	if !ok || b.owner != owner {
		return nil, false
	}
	return b, true
}

// dropOwner forgets what owner kept.
func (s *store) dropOwner(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := s.order[:0]
	for _, id := range s.order {
		if b := s.blobs[id]; b != nil && b.owner == owner {
			s.size -= int64(len(b.data))
			delete(s.blobs, id)
			continue
		}
		keep = append(keep, id)
	}
	s.order = keep
}

// register serves the kept content through resources/read.
func (s *store) register(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "swebox-content",
		URITemplate: blobScheme + "{id}/{name}",
		Description: "An artifact or file a tool returned as a resource link, readable by the client that got the link while the server keeps it.",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		b, ok := s.get(ownerOf(req.Session, req.Extra), req.Params.URI)
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{resourceContents(req.Params.URI, b.mime, b.data)}}, nil
	})
}

// resourceContents holds data as text when it is UTF-8 text, else as a blob.
func resourceContents(uri, mime string, data []byte) *mcp.ResourceContents {
	rc := &mcp.ResourceContents{URI: uri, MIMEType: mime}
	if isText(mime, data) {
		rc.Text = string(data)
	} else {
		rc.Blob = data
	}
	return rc
}

func isText(mime string, data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	return strings.HasPrefix(mime, "text/") || mime == "application/json" || mime == "" ||
		strings.HasSuffix(mime, "+json") || strings.HasSuffix(mime, "+xml") || mime == "application/xml"
}

// isImage reports whether MCP clients show data of this type as an image.
func isImage(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// fileContent turns one file into content: an image, an embedded resource
// within budget, or a resource link beyond it. It returns how it came back
// and the bytes it inlined.
func (s *server) fileContent(owner, name, mime string, data []byte, budget int64) (mcp.Content, string, string, int64) {
	if data == nil {
		return nil, "omitted", "", 0
	}
	uri, kept := s.store.put(owner, name, mime, data)
	n := int64(len(data))
	switch {
	case n <= budget && isImage(mime):
		return &mcp.ImageContent{Data: data, MIMEType: mime}, "image", uri, n
	case n <= budget:
		if !kept {
			uri = "file:///workspace/" + url.PathEscape(name)
		}
		return &mcp.EmbeddedResource{Resource: resourceContents(uri, mime, data)}, "resource", uri, n
	case kept:
		return &mcp.ResourceLink{URI: uri, Name: name, MIMEType: mime, Size: &n,
			Description: "larger than the server inlines; read it with resources/read or pass the uri to session_write_file"}, "link", uri, 0
	}
	return nil, "omitted", "", 0
}

// artifactContent turns a run's artifacts into content within the server's
// inline cap, and fills in how each came back.
func (s *server) artifactContent(owner string, arts []artifactData) ([]mcp.Content, []artifactInfo, int64) {
	budget := s.cfg.ArtifactCap
	var content []mcp.Content
	var infos []artifactInfo
	var inlined int64
	for _, a := range arts {
		info := a.info
		var c mcp.Content
		var n int64
		c, info.ReturnedAs, info.URI, n = s.fileContent(owner, "output/"+a.info.Path, a.info.MIMEType, a.data, budget)
		budget -= n
		inlined += n
		if c != nil {
			content = append(content, c)
		}
		infos = append(infos, info)
	}
	return content, infos, inlined
}

// result is a tool result: the output as JSON text (what every client shows
// the model), then the extra content; the output is also the structured
// content.
func result(out any, extra ...mcp.Content) (*mcp.CallToolResult, int) {
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	return &mcp.CallToolResult{
		Content:           append([]mcp.Content{&mcp.TextContent{Text: string(b)}}, extra...),
		StructuredContent: out,
	}, len(b)
}
