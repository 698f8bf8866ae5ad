package main

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/swebox/swebox/sandbox"
)

// maxJobsPerClient bounds the background jobs one client may have running.
const maxJobsPerClient = 16

// jobRun does a background call's work and returns its result.
type jobRun func(ctx context.Context, c *call) (*mcp.CallToolResult, error)

// job is a call running (or run) in the background.
type job struct {
	id, owner, tool, session string
	started                  time.Time
	limit                    time.Duration
	files                    *jobFiles             // session jobs: output read while running
	stdout, stderr           *sandbox.OutputBuffer // other jobs: output kept as it comes
	workspace                string
	cancel                   context.CancelFunc
	done                     chan struct{}

	mu        sync.Mutex
	state     string // running, succeeded, failed, cancelled
	res       *mcp.CallToolResult
	finished  time.Time
	cancelled bool
}

// jobs are the background calls of every client, by id.
type jobs struct {
	base   context.Context // the server's: jobs outlive the call that started them
	expiry time.Duration   // finished jobs are forgotten this long after
	mu     sync.Mutex
	byID   map[string]*job
}

func newJobs(base context.Context, expiry time.Duration) *jobs {
	return &jobs{base: base, expiry: expiry, byID: map[string]*job{}}
}

// start runs run in the background as job id (randomID("j") when empty).
func (js *jobs) start(s *server, owner, tool, session string, limit time.Duration, files *jobFiles, workspace string, id string, run jobRun) (string, error) {
	if id == "" {
		id = randomID("j")
	}
	js.mu.Lock()
	running, total := 0, 0
	now := time.Now()
	for k, j := range js.byID {
		j.mu.Lock()
		if j.state == "running" {
			total++
			if j.owner == owner {
				running++
			}
		}
		if j.state != "running" && now.Sub(j.finished) > js.expiry {
			delete(js.byID, k)
		}
		j.mu.Unlock()
	}
	if running >= maxJobsPerClient {
		js.mu.Unlock()
		return "", toolErrorf("you have %d background jobs running, the most this server allows; wait for one (job_status) or cancel one (job_cancel)", running)
	}
	if total >= s.cfg.MaxJobsTotal {
		js.mu.Unlock()
		return "", toolErrorf("this server runs %d background jobs for all its clients, the most it allows; wait for one of yours (job_status) or try again later", total)
	}
	ctx, cancel := context.WithCancel(js.base)
	j := &job{id: id, owner: owner, tool: tool, session: session, started: now, limit: limit,
		files: files, workspace: workspace, cancel: cancel, done: make(chan struct{}), state: "running"}
	if files == nil {
		j.stdout, j.stderr = sandbox.NewOutputBuffer(s.cfg.OutputLimit), sandbox.NewOutputBuffer(s.cfg.OutputLimit)
	}
	js.byID[id] = j
	js.mu.Unlock()

	go func() {
		defer close(j.done)
		defer cancel()
		c := &call{owner: owner, session: session, job: id, stdout: j.stdout, stderr: j.stderr}
		res, err := run(ctx, c)
		if err != nil {
			res = errorResult(ctx, err)
		}
		j.mu.Lock()
		j.res, j.finished = res, time.Now()
		switch {
		case j.cancelled:
			j.state = "cancelled"
		case res.IsError:
			j.state = "failed"
		default:
			j.state = "succeeded"
		}
		j.mu.Unlock()
		s.logCall(tool, c, time.Since(j.started), res, err)
	}()
	return id, nil
}

// get returns owner's job id; another client's job is as unknown as none.
func (js *jobs) get(owner, id string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok || j.owner != owner {
		return nil, toolErrorf("no job %q for this client (finished jobs are forgotten after a while); start the call again", id)
	}
	return j, nil
}

// dropAll cancels every job and waits for them.
func (js *jobs) dropAll() { js.drop(func(*job) bool { return true }) }

// dropOwner cancels owner's jobs and forgets them.
func (js *jobs) dropOwner(owner string) { js.drop(func(j *job) bool { return j.owner == owner }) }

func (js *jobs) drop(match func(*job) bool) {
	js.mu.Lock()
	var mine []*job
	for k, j := range js.byID {
		if match(j) {
			mine = append(mine, j)
			delete(js.byID, k)
		}
	}
	js.mu.Unlock()
	for _, j := range mine {
		j.cancel()
	}
	for _, j := range mine {
		<-j.done
	}
}

// jobStatus is what job_status and job_cancel return.
type jobStatus struct {
	Job         string  `json:"job"`
	Tool        string  `json:"tool" jsonschema:"the tool the job runs"`
	Session     string  `json:"session,omitempty"`
	State       string  `json:"state" jsonschema:"running, succeeded, failed (the result says why) or cancelled"`
	ElapsedS    float64 `json:"elapsed_s" jsonschema:"seconds since the job started (until it ended, once it has)"`
	LimitS      float64 `json:"limit_s" jsonschema:"the job's timeout in seconds"`
	Progress    float64 `json:"progress" jsonschema:"elapsed time over the timeout while running (0 to 1); 1 once ended"`
	StdoutSoFar string  `json:"stdout_so_far,omitempty" jsonschema:"while running: the output written so far (head and tail past the server's output limit)"`
	StderrSoFar string  `json:"stderr_so_far,omitempty"`
	Result      any     `json:"result,omitempty" jsonschema:"once ended: the call's result, as the call would have returned it"`
	Error       string  `json:"error,omitempty" jsonschema:"once failed: why"`
}

// status describes j; once it has ended, the result's further content
// (images, resources) comes with it.
func (s *server) status(j *job) (jobStatus, []mcp.Content) {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := jobStatus{Job: j.id, Tool: j.tool, Session: j.session, State: j.state, LimitS: j.limit.Seconds()}
	end := time.Now()
	if j.state != "running" {
		end = j.finished
	}
	el := end.Sub(j.started)
	st.ElapsedS = el.Round(time.Millisecond).Seconds()
	if j.state == "running" {
		st.Progress = min(1, el.Seconds()/max(j.limit.Seconds(), 1e-3))
		switch {
		case j.files != nil:
			st.StdoutSoFar = readCapped(j.workspace, j.files.Stdout, s.cfg.OutputLimit).String()
			st.StderrSoFar = readCapped(j.workspace, j.files.Stderr, s.cfg.OutputLimit).String()
		case j.stdout != nil:
			st.StdoutSoFar, st.StderrSoFar = j.stdout.Output().String(), j.stderr.Output().String()
		}
		return st, nil
	}
	st.Progress = 1
	if j.res == nil {
		return st, nil
	}
	if j.res.IsError {
		for _, c := range j.res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				st.Error += t.Text
			}
		}
		return st, nil
	}
	st.Result = j.res.StructuredContent
	if len(j.res.Content) > 1 {
		return st, j.res.Content[1:]
	}
	return st, nil
}

type jobIn struct {
	Job string `json:"job" jsonschema:"the job id a call with background: true returned"`
}

func (s *server) addJobTools(srv *mcp.Server) {
	addTool[jobIn, jobStatus](s, srv, &mcp.Tool{
		Name: "job_status",
		Description: "Report a background job: running (with elapsed time, progress and the output so far) or ended (with the call's full result). " +
			"Poll it every few seconds while the state is running.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *mcp.CallToolRequest, c *call, in jobIn) (*mcp.CallToolResult, error) {
		j, err := s.jobs.get(c.owner, in.Job)
		if err != nil {
			return nil, err
		}
		c.job, c.session = j.id, j.session
		st, extra := s.status(j)
		res, n := result(st, extra...)
		c.bytes = n
		return res, nil
	})

	addTool[jobIn, jobStatus](s, srv, &mcp.Tool{
		Name:        "job_cancel",
		Description: "Cancel a background job: every process it started in its sandbox is killed (a session stays usable). Returns the job's final state.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, c *call, in jobIn) (*mcp.CallToolResult, error) {
		j, err := s.jobs.get(c.owner, in.Job)
		if err != nil {
			return nil, err
		}
		c.job, c.session = j.id, j.session
		j.mu.Lock()
		if j.state == "running" {
			j.cancelled = true
		}
		j.mu.Unlock()
		j.cancel()
		select {
		case <-j.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		st, extra := s.status(j)
		res, n := result(st, extra...)
		c.bytes = n
		return res, nil
	})
}
