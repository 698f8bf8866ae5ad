package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/swebox/swebox/sandbox"
	"golang.org/x/sync/semaphore"
)

// version is reported to clients in the initialize handshake.
const version = "0.1.0"

// stdioOwner owns every session of a stdio server: one process, one client.
const stdioOwner = "stdio"

// server holds what every MCP session of one process shares: the sandboxes,
// the sessions and jobs by owner, the linked content and the call log.
type server struct {
	cfg      config
	base     context.Context // outlives calls: background jobs run in it
	box      *backend
	sessions *sessions
	jobs     *jobs
	store    *store
	evals    *evaluator
	tasks    *taskEnvs
	calls    *slog.Logger
	running  chan struct{} // semaphore of --max_running
	// reserveMu orders the count-and-add of new sessions and task
	// sessions (see reserve).
	reserveMu sync.Mutex
	// readMem bounds the file content session_read_file calls hold
	// (--read_memory).
	readMem *semaphore.Weighted
	idle    *idleClients // stateless clients, dropped when idle
}

// owner is who a call comes from (see ownerOf).
func owner(req *mcp.CallToolRequest) string {
	if req == nil {
		return stdioOwner
	}
	return ownerOf(req.Session, req.Extra)
}

// call is what one tool call reports to the call log.
type call struct {
	owner   string
	session string
	exit    *int
	bytes   int
	job     string
	// stdout and stderr receive a background one-shot run's output live,
	// for job_status; nil otherwise.
	stdout, stderr *sandbox.OutputBuffer
}

// live returns spec with the call's live output writers, if it has them.
func (c *call) live(spec runSpec) runSpec {
	if c.stdout != nil {
		spec.Stdout, spec.Stderr = c.stdout, c.stderr
	}
	return spec
}

func (c *call) setExit(code int) { c.exit = &code }

// toolError is a failure the model can act on: it becomes a result with
// isError set and this message, never a protocol error.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// handler is a tool's implementation; c collects what the call log records.
// Its result's structured content is the tool's output (see result).
type handler[In any] func(ctx context.Context, req *mcp.CallToolRequest, c *call, in In) (*mcp.CallToolResult, error)

// addTool registers h under t.Name with the input schema of In and, unless
// Out is any (tools whose background form returns a job instead), the output
// schema of Out. Every call is logged once and every failure is an isError
// result; infrastructure failures say so, so that the model does not take
// them for its own mistake.
func addTool[In, Out any](s *server, srv *mcp.Server, t *mcp.Tool, h handler[In]) {
	if reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		schema, err := jsonschema.For[Out](nil)
		if err != nil {
			panic(fmt.Sprintf("output schema of %s: %v", t.Name, err)) // a programming error, caught by every test
		}
		t.OutputSchema = schema
	}
	mcp.AddTool(srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		start := time.Now()
		c := &call{owner: owner(req)}
		s.watchOwner(req)
		defer s.idle.begin(c.owner)()
		res, err := h(ctx, req, c, in)
		if err != nil {
			res = errorResult(ctx, err)
		}
		s.logCall(t.Name, c, time.Since(start), res, err)
		return res, nil, nil
	})
}

// errorResult is the isError result of a failed call. A failure the model
// cannot fix says so, so that it is not taken for the model's mistake.
func errorResult(ctx context.Context, err error) *mcp.CallToolResult {
	var te *toolError
	msg := err.Error()
	switch {
	case errors.As(err, &te):
	case errors.Is(err, errSessionGone):
		msg = "the session is gone: it was closed, or expired after being idle; create a new one with session_create"
	case ctx.Err() != nil:
		msg = "the call was cancelled: " + msg
	default:
		msg = "swebox server failure (not a problem with your input; retrying later may help): " + msg
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// logCall writes the one line a tool call gets.
func (s *server) logCall(tool string, c *call, d time.Duration, res *mcp.CallToolResult, err error) {
	attrs := []any{
		slog.String("client", c.owner), slog.String("tool", tool),
		slog.Int64("duration_ms", d.Milliseconds()), slog.Int("bytes", c.bytes),
	}
	if c.session != "" {
		attrs = append(attrs, slog.String("session", c.session))
	}
	if c.job != "" {
		attrs = append(attrs, slog.String("job", c.job))
	}
	if c.exit != nil {
		attrs = append(attrs, slog.Int("exit", *c.exit))
	}
	if err != nil || (res != nil && res.IsError) {
		attrs = append(attrs, slog.Bool("is_error", true))
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
	}
	s.calls.Info("tool call", attrs...)
}

// acquire takes a place among the --max_running calls; the returned func
// gives it back.
func (s *server) acquire(ctx context.Context) (func(), error) {
	select {
	case s.running <- struct{}{}:
		return func() { <-s.running }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// progress sends MCP progress notifications while a long call runs, when the
// client asked for them (a progress token in the request). The returned func
// stops them.
func (s *server) progress(ctx context.Context, req *mcp.CallToolRequest, total time.Duration, what string) func() {
	if req == nil || req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		tick := time.NewTicker(s.cfg.ProgressTick)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				el := time.Since(start).Round(time.Second)
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      el.Seconds(),
					Total:         total.Seconds(),
					Message:       fmt.Sprintf("%s: running for %s (limit %s)", what, el, total),
				})
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// timeout turns a requested timeout_s into the call's timeout: the server's
// limit when none or more is asked for.
func (s *server) timeout(seconds float64) time.Duration {
	d := time.Duration(seconds * float64(time.Second))
	if d <= 0 || d > s.cfg.Timeout {
		return s.cfg.Timeout
	}
	return d
}

// newMCPServer builds the MCP server with every tool. In HTTP mode one is
// shared by all clients; ownership is by MCP session id, or by token where
// the protocol has no session (see ownerOf).
func (s *server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "swebox", Title: "swebox sandboxes and SWE-bench evaluator", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		// Over HTTP, 2026-07-28 is served by the stateless handler, whose
		// clients own what they create by their token (see byProtocol).
		SupportedProtocolVersions: protocolVersions,
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addRunTools(srv)
	s.addSessionTools(srv)
	s.addJobTools(srv)
	s.addSWEBenchTools(srv)
	s.addTaskTools(srv)
	s.store.register(srv)
	return srv
}

const instructions = `Tools to run code in hardened, network-less Linux sandboxes (Debian, Python 3 with pytest) and to grade patches against SWE-bench instances.
- run_python / run_shell: one fresh sandbox per call. Write files to output/ to get them back (images are shown to you).
- session_*: a sandbox that keeps its files and installed packages across calls; close it when done.
- Long calls can run with background: true; poll job_status, stop with job_cancel.
- run_tests: check a function against test cases; swebench_evaluate: run a SWE-bench instance's tests on your patch.
- swebench_task_*: work on a SWE-bench task in its repository (/testbed) through session_exec and the session file tools, then submit your diff for the official verdict.`
