package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/swebox/swebox/internal/hostfs"
)

// sessions maps sandbox sessions to the client that created them. The
// sandbox itself is the backend's; this is who may use it.
type sessions struct {
	mu      sync.Mutex
	byID    map[string]*sessionEntry
	watched map[string]bool // MCP sessions whose end is watched
}

type sessionEntry struct {
	id, owner, image string
	egress           []string
	ready            bool // created in the backend; until then sync keeps it
}

func newSessions() *sessions {
	return &sessions{byID: map[string]*sessionEntry{}, watched: map[string]bool{}}
}

// errNoSession is the one answer for a session that does not exist and for
// one another client owns: nobody learns of others' sessions.
func errNoSession(id string) error {
	return toolErrorf("no session %q for this client; session_list shows yours, session_create makes one", id)
}

func (r *sessions) get(owner, id string) (*sessionEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byID[id]
	if !ok || e.owner != owner {
		return nil, errNoSession(id)
	}
	return e, nil
}

func (r *sessions) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
}

func (r *sessions) ofOwner(owner string) []*sessionEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*sessionEntry
	for _, e := range r.byID {
		if e.owner == owner {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// watchOwner arranges, once per MCP session of an HTTP server, that its
// sandbox sessions, jobs and kept content go when it ends.
func (s *server) watchOwner(req *mcp.CallToolRequest) {
	if req == nil || req.Session == nil || req.Session.ID() == "" {
		return
	}
	ss, id := req.Session, req.Session.ID()
	s.sessions.mu.Lock()
	seen := s.sessions.watched[id]
	s.sessions.watched[id] = true
	s.sessions.mu.Unlock()
	if seen {
		return
	}
	go func() {
		_ = ss.Wait()
		s.dropOwner(id)
		s.sessions.mu.Lock()
		delete(s.sessions.watched, id)
		s.sessions.mu.Unlock()
	}()
}

// dropOwner ends everything owner had.
func (s *server) dropOwner(owner string) {
	s.jobs.dropOwner(owner)
	if s.tasks != nil {
		if err := s.tasks.drop(func(e *taskEntry) bool { return e.owner == owner }); err != nil {
			s.calls.Warn("close task sessions of a departed client", "client", owner, "error", err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(s.base, time.Minute)
	defer cancel()
	for _, e := range s.sessions.ofOwner(owner) {
		if err := s.box.closeSession(ctx, e.id); err != nil {
			s.calls.Warn("close session of a departed client", "client", owner, "session", e.id, "error", err.Error())
		}
		s.sessions.remove(e.id)
	}
	s.store.dropOwner(owner)
}

// reserve records a new session by calling add, which takes its registry's
// lock, when its owner and all clients together are within --max_sessions
// and --max_sessions_total; sandbox sessions and task sessions count
// alike. The caller adds before it starts anything, so that concurrent
// starts count each other.
func (s *server) reserve(owner string, add func()) error {
	s.reserveMu.Lock()
	defer s.reserveMu.Unlock()
	mine, total := s.tasks.count(owner)
	s.sessions.mu.Lock()
	for _, e := range s.sessions.byID {
		total++
		if e.owner == owner {
			mine++
		}
	}
	s.sessions.mu.Unlock()
	switch {
	case mine >= s.cfg.MaxSessions:
		return toolErrorf("you have %d sessions and task sessions open, the most this server allows; close one with session_close or swebench_task_close", mine)
	case total >= s.cfg.MaxSessionsTotal:
		return toolErrorf("this server holds %d sessions and task sessions for all its clients, the most it allows; close one of yours or try again later", total)
	}
	add()
	return nil
}

// holdRead takes n bytes of --read_memory for a file's content, waiting
// while other reads hold too much; the returned func gives them back. The
// content is held until the call's result is built, and no more than
// --store_limit is asked at once, which --read_memory is at least.
func (s *server) holdRead(ctx context.Context, n int64) (func(), error) {
	if err := s.readMem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { s.readMem.Release(n) }, nil
}

// sync forgets the sessions the backend no longer has (expired) and returns
// the live state of the rest.
func (s *server) syncSessions(ctx context.Context) (map[string]sessionState, error) {
	live, err := s.box.liveSessions(ctx)
	if err != nil {
		return nil, err
	}
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	for id, e := range s.sessions.byID {
		if _, ok := live[id]; !ok && e.ready {
			delete(s.sessions.byID, id)
		}
	}
	return live, nil
}

// useSession checks that owner may use id; a session the backend lost
// (expired) is forgotten and reported gone.
func (s *server) useSession(c *call, id string) (*sessionEntry, error) {
	c.session = id
	return s.sessions.get(c.owner, id)
}

// gone forgets a session the backend reports as ended.
func (s *server) gone(id string, err error) error {
	if errors.Is(err, errSessionGone) {
		s.sessions.remove(id)
	}
	return err
}

type sessionCreateIn struct {
	Image        string   `json:"image,omitempty" jsonschema:"the image to run, one of those the server allows; default: the server's first"`
	Requirements []string `json:"requirements,omitempty" jsonschema:"pip requirement specifiers to install into the session's environment (only if the server has a package source)"`
	Egress       []string `json:"egress,omitempty" jsonschema:"hosts the session's programs may reach through a proxy, each one the server allows (its --egress_allow list); default: no network at all"`
}

type sessionInfoOut struct {
	Session      string   `json:"session" jsonschema:"the session id for the other session_* tools"`
	Kind         string   `json:"kind" jsonschema:"sandbox (session_create) or task (swebench_task_start)"`
	InstanceID   string   `json:"instance_id,omitempty" jsonschema:"a task session's SWE-bench instance"`
	Dataset      string   `json:"dataset,omitempty" jsonschema:"a task session's dataset"`
	Submissions  int      `json:"submissions,omitempty" jsonschema:"a task session's swebench_task_submit calls so far"`
	Image        string   `json:"image"`
	Egress       []string `json:"egress,omitempty"`
	IdleExpiryS  float64  `json:"idle_expiry_s" jsonschema:"seconds without a call after which the session is closed"`
	Created      string   `json:"created,omitempty"`
	LastUsed     string   `json:"last_used,omitempty"`
	Runs         int      `json:"runs,omitempty" jsonschema:"calls made so far"`
	Running      int      `json:"running,omitempty" jsonschema:"calls running now"`
	Requirements []string `json:"requirements,omitempty" jsonschema:"packages installed in the session's environment"`
}

type sessionExecIn struct {
	Session    string  `json:"session" jsonschema:"the session id session_create returned"`
	Command    string  `json:"command,omitempty" jsonschema:"a shell command line, run by /bin/sh in /workspace (give command or code)"`
	Code       string  `json:"code,omitempty" jsonschema:"a Python 3 program, run in /workspace with the session's packages (give command or code)"`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"seconds the command may run; default and maximum: the server's limit"`
	Background bool    `json:"background,omitempty" jsonschema:"return a job id at once; job_status then shows the output so far and, at the end, the result"`
}

type sessionWriteIn struct {
	Session string `json:"session" jsonschema:"the session id"`
	fileArg
}

type sessionWriteOut struct {
	Path string `json:"path" jsonschema:"where the file is, relative to /workspace"`
	Size int    `json:"size"`
}

type sessionReadIn struct {
	Session string `json:"session" jsonschema:"the session id"`
	Path    string `json:"path" jsonschema:"the file to read, relative to /workspace, e.g. output/result.csv or mounts/data.csv"`
}

type sessionReadOut struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	MIMEType   string `json:"mime_type"`
	ReturnedAs string `json:"returned_as" jsonschema:"image, resource (the content follows) or link (too large to inline: a uri for resources/read or session_write_file)"`
	URI        string `json:"uri,omitempty"`
}

type sessionIn struct {
	Session string `json:"session" jsonschema:"the session id"`
}

type sessionListOut struct {
	Sessions []sessionInfoOut `json:"sessions"`
	Max      int              `json:"max" jsonschema:"the most sessions one client may hold"`
}

type sessionCloseOut struct {
	Session string `json:"session"`
	Closed  bool   `json:"closed"`
}

func (s *server) addSessionTools(srv *mcp.Server) {
	addTool[sessionCreateIn, sessionInfoOut](s, srv, &mcp.Tool{
		Name: "session_create",
		Description: "Create a sandbox session: an isolated Linux workspace (/workspace) whose files, installed packages and state persist across session_exec calls until session_close or until it sits idle too long. " +
			"No network unless the server allows the hosts you list in egress. Returns the session id.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionCreateIn) (*mcp.CallToolResult, error) {
		if err := s.box.agentRuns(); err != nil {
			return nil, err
		}
		img, err := s.image(in.Image)
		if err != nil {
			return nil, err
		}
		if err := s.checkEgress(in.Egress); err != nil {
			return nil, err
		}
		if _, err := s.syncSessions(ctx); err != nil {
			return nil, err
		}
		id := randomID("s")
		c.session = id
		// Reserved before the sandbox starts, so concurrent creates count.
		if err := s.reserve(c.owner, func() {
			s.sessions.mu.Lock()
			s.sessions.byID[id] = &sessionEntry{id: id, owner: c.owner, image: img, egress: in.Egress}
			s.sessions.mu.Unlock()
		}); err != nil {
			return nil, err
		}
		release, err := s.acquire(ctx)
		if err != nil {
			s.sessions.remove(id)
			return nil, err
		}
		defer release()
		if err := s.box.createSession(ctx, id, sessionSpec{Image: img, Requirements: in.Requirements, Egress: in.Egress}); err != nil {
			s.sessions.remove(id)
			return nil, err
		}
		s.sessions.mu.Lock()
		if e, ok := s.sessions.byID[id]; ok {
			e.ready = true
		}
		s.sessions.mu.Unlock()
		out := sessionInfoOut{Session: id, Kind: "sandbox", Image: img, Egress: in.Egress, IdleExpiryS: s.cfg.IdleExpiry.Seconds()}
		res, nb := result(out)
		c.bytes = nb
		return res, nil
	})

	addTool[sessionExecIn, any](s, srv, &mcp.Tool{
		Name: "session_exec",
		Description: "Run a shell command line or a Python program in a session's sandbox, in /workspace, where files from earlier calls are still there. " +
			"Returns stdout, stderr, exit status, the Python exception if any, and files created or changed under output/ (images shown as images). " +
			"With background: true it returns a job id at once; job_status shows the output so far and job_cancel kills everything the command started.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in sessionExecIn) (*mcp.CallToolResult, error) {
		if e := s.tasks.get(c.owner, in.Session); e != nil {
			c.session = in.Session
			if (in.Command == "") == (in.Code == "") {
				return nil, toolErrorf("give exactly one of command (a shell command line) and code (a Python program)")
			}
			return s.taskExec(ctx, req, c, e, in)
		}
		if _, err := s.useSession(c, in.Session); err != nil {
			return nil, err
		}
		if (in.Command == "") == (in.Code == "") {
			return nil, toolErrorf("give exactly one of command (a shell command line) and code (a Python program)")
		}
		timeout := s.timeout(in.TimeoutS)
		run := func(ctx context.Context, c *call, files *jobFiles) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			r, err := s.box.sessionExec(ctx, in.Session, in.Command, in.Code, timeout, files)
			if err != nil {
				return nil, s.gone(in.Session, err)
			}
			return s.runOutputResult(c.owner, c, r), nil
		}
		if !in.Background {
			stop := s.progress(ctx, req, timeout, "session_exec")
			defer stop()
			res, err := run(ctx, c, nil)
			return res, err
		}
		ws, err := s.box.workspace(ctx, in.Session)
		if err != nil {
			return nil, s.gone(in.Session, err)
		}
		id := randomID("j")
		files := &jobFiles{Stdout: ".swebox-mcp/" + id + ".out", Stderr: ".swebox-mcp/" + id + ".err"}
		if _, err := s.jobs.start(s, c.owner, "session_exec", in.Session, timeout, files, ws, id, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			return run(ctx, c, files)
		}); err != nil {
			return nil, err
		}
		c.job = id
		res, n := result(started{Job: id, Status: "started"})
		c.bytes = n
		return res, nil
	})

	addTool[sessionWriteIn, sessionWriteOut](s, srv, &mcp.Tool{
		Name: "session_write_file",
		Description: "Write a file into a session's /workspace/mounts/ directory, from text, base64 bytes, an http(s) URL the server downloads, or the uri of a resource link an earlier call returned " +
			"(so large files need not pass through you).",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionWriteIn) (*mcp.CallToolResult, error) {
		if e := s.tasks.get(c.owner, in.Session); e != nil {
			c.session = in.Session
			p, size, err := s.taskWriteFile(ctx, c, e, in.fileArg)
			if err != nil {
				return nil, err
			}
			res, n := result(sessionWriteOut{Path: p, Size: size})
			c.bytes = n + size
			return res, nil
		}
		if _, err := s.useSession(c, in.Session); err != nil {
			return nil, err
		}
		f, err := s.inputFile(c.owner, in.fileArg)
		if err != nil {
			return nil, err
		}
		if err := s.box.addFile(ctx, in.Session, f); err != nil {
			return nil, s.gone(in.Session, err)
		}
		out := sessionWriteOut{Path: "mounts/" + f.Name, Size: len(f.Data)}
		if f.URL != "" {
			if ws, err := s.box.workspace(ctx, in.Session); err == nil {
				if n, err := workspaceFileSize(ws, out.Path); err == nil {
					out.Size = int(n)
				}
			}
		}
		res, n := result(out)
		c.bytes = n + len(f.Data)
		return res, nil
	})

	addTool[sessionReadIn, sessionReadOut](s, srv, &mcp.Tool{
		Name: "session_read_file",
		Description: "Read a file from a session's /workspace: images come back as images, other files as a resource within the server's size limit, larger ones as a resource link " +
			"(read it with resources/read, or hand its uri to session_write_file of another session).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionReadIn) (*mcp.CallToolResult, error) {
		var data []byte
		var p string
		if e := s.tasks.get(c.owner, in.Session); e != nil {
			c.session = in.Session
			var err error
			var release func()
			if data, p, release, err = s.taskReadFile(ctx, c, e, in.Path); err != nil {
				return nil, err
			}
			defer release()
		} else {
			if _, err := s.useSession(c, in.Session); err != nil {
				return nil, err
			}
			var err error
			if p, err = cleanPath(in.Path); err != nil {
				return nil, err
			}
			ws, err := s.box.workspace(ctx, in.Session)
			if err != nil {
				return nil, s.gone(in.Session, err)
			}
			size, err := workspaceFileSize(ws, p)
			if err == nil && size > s.cfg.StoreLimit {
				err = hostfs.ErrTooLarge
			}
			if err == nil {
				release, rerr := s.holdRead(ctx, size)
				if rerr != nil {
					return nil, rerr
				}
				defer release()
				// A file that grew since is refused as too large.
				data, err = readWorkspaceFile(ws, p, size)
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil, toolErrorf("no file %s in the session's /workspace", p)
			}
			if errors.Is(err, hostfs.ErrTooLarge) {
				return nil, toolErrorf("%s is larger than this server passes on (%d bytes); process it in the session instead", p, s.cfg.StoreLimit)
			}
			if err != nil {
				return nil, toolErrorf("cannot read %s: %v", p, err)
			}
		}
		mt := mime.TypeByExtension(path.Ext(p))
		if mt == "" {
			mt = "application/octet-stream"
			if isText("", data) {
				mt = "text/plain"
			}
		}
		mt, _, _ = strings.Cut(mt, ";")
		out := sessionReadOut{Path: p, Size: int64(len(data)), MIMEType: mt}
		var content mcp.Content
		var inlined int64
		content, out.ReturnedAs, out.URI, inlined = s.fileContent(c.owner, p, mt, data, s.cfg.ArtifactCap)
		var extra []mcp.Content
		if content != nil {
			extra = append(extra, content)
		}
		res, n := result(out, extra...)
		c.bytes = n + int(inlined)
		return res, nil
	})

	addTool[struct{}, sessionListOut](s, srv, &mcp.Tool{
		Name:        "session_list",
		Description: "List your open sessions, sandbox sessions (session_create) and task sessions (swebench_task_start), with when each was created and, for a sandbox session, when it was last used and what is installed in it.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, _ struct{}) (*mcp.CallToolResult, error) {
		live, err := s.syncSessions(ctx)
		if err != nil {
			return nil, err
		}
		out := sessionListOut{Sessions: []sessionInfoOut{}, Max: s.cfg.MaxSessions}
		for _, e := range s.sessions.ofOwner(c.owner) {
			st, ok := live[e.id]
			if !ok {
				continue // still being created
			}
			out.Sessions = append(out.Sessions, sessionInfoOut{
				Session: e.id, Kind: "sandbox", Image: e.image, Egress: e.egress, IdleExpiryS: s.cfg.IdleExpiry.Seconds(),
				Created: st.Created.UTC().Format(time.RFC3339), LastUsed: st.LastUsed.UTC().Format(time.RFC3339),
				Runs: st.Runs, Running: st.Active, Requirements: st.Requirements,
			})
		}
		for _, e := range s.tasks.ofOwner(c.owner) {
			info := sessionInfoOut{
				Session: e.id, Kind: "task", InstanceID: e.instanceID, Dataset: e.dataset, Submissions: e.env.Submissions(),
				Created: e.created.UTC().Format(time.RFC3339),
			}
			info.Egress = e.hosts
			out.Sessions = append(out.Sessions, info)
		}
		res, n := result(out)
		c.bytes = n
		return res, nil
	})

	addTool[sessionIn, sessionCloseOut](s, srv, &mcp.Tool{
		Name:        "session_close",
		Description: "Close a session: its sandbox, its processes and its files are deleted. Close sessions you no longer need; each client may hold only a few.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in sessionIn) (*mcp.CallToolResult, error) {
		if _, err := s.useSession(c, in.Session); err != nil {
			return nil, err
		}
		if err := s.box.closeSession(ctx, in.Session); err != nil {
			return nil, fmt.Errorf("close session: %w", err)
		}
		s.sessions.remove(in.Session)
		out := sessionCloseOut{Session: in.Session, Closed: true}
		res, n := result(out)
		c.bytes = n
		return res, nil
	})
}
