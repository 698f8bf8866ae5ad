package main

import (
	"context"
	"encoding/base64"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fileArg is a file given to a tool: exactly one of content,
// content_base64, url and uri.
type fileArg struct {
	Path          string `json:"path" jsonschema:"where the file goes, relative to mounts/ in the sandbox's /workspace (e.g. data.csv becomes /workspace/mounts/data.csv)"`
	Content       string `json:"content,omitempty" jsonschema:"the file's text"`
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"the file's bytes, base64-encoded"`
	URL           string `json:"url,omitempty" jsonschema:"an http or https URL the server downloads the file from (public addresses only), so that large inputs need not pass through you"`
	URI           string `json:"uri,omitempty" jsonschema:"the uri of a resource link an earlier call returned (swebox://blob/...)"`
}

// cleanPath checks a relative path a tool was given: no absolute paths, no
// "..", nothing outside the sandbox's workspace.
func cleanPath(p string) (string, error) {
	p = strings.TrimPrefix(p, "/workspace/")
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return "", toolErrorf("invalid path %q: give a relative path inside /workspace, e.g. data/input.csv", p)
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", toolErrorf("invalid path %q: it leaves /workspace", p)
	}
	return c, nil
}

// inputFile resolves a fileArg; owner reads its own resource links only.
func (s *server) inputFile(owner string, f fileArg) (inputFile, error) {
	name, err := cleanPath(f.Path)
	if err != nil {
		return inputFile{}, err
	}
	set := 0
	for _, v := range []string{f.Content, f.ContentBase64, f.URL, f.URI} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return inputFile{}, toolErrorf("file %q: give only one of content, content_base64, url and uri", f.Path)
	}
	out := inputFile{Name: name}
	switch {
	case f.ContentBase64 != "":
		out.Data, err = base64.StdEncoding.DecodeString(f.ContentBase64)
		if err != nil {
			return inputFile{}, toolErrorf("file %q: content_base64 is not valid base64: %v", f.Path, err)
		}
	case f.URL != "":
		u, err := url.Parse(f.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return inputFile{}, toolErrorf("file %q: url must be an http or https URL", f.Path)
		}
		out.URL = f.URL
	case f.URI != "":
		b, ok := s.store.get(owner, f.URI)
		if !ok {
			return inputFile{}, toolErrorf("file %q: no content at uri %q for this client (links expire when the server needs the room)", f.Path, f.URI)
		}
		out.Data = b.data
	default:
		out.Data = []byte(f.Content)
	}
	return out, nil
}

// image checks a requested image against the allowlist.
func (s *server) image(name string) (string, error) {
	if name == "" {
		return s.cfg.Images[0], nil
	}
	if !slices.Contains(s.cfg.Images, name) {
		return "", toolErrorf("image %q is not allowed on this server; allowed: %s", name, strings.Join(s.cfg.Images, ", "))
	}
	return name, nil
}

type runPythonIn struct {
	Code         string    `json:"code" jsonschema:"the Python 3 program; it runs as a file with /workspace as working directory. Print results to stdout; write files to output/ to get them back (PNG, JPEG, GIF and WebP images are shown to you)."`
	Requirements []string  `json:"requirements,omitempty" jsonschema:"pip requirement specifiers to install first, e.g. numpy==1.26.4 (only if the server has a package source)"`
	Files        []fileArg `json:"files,omitempty" jsonschema:"input files, placed under /workspace/mounts/"`
	TimeoutS     float64   `json:"timeout_s,omitempty" jsonschema:"seconds the program may run; default and maximum: the server's limit"`
	Background   bool      `json:"background,omitempty" jsonschema:"return a job id at once instead of waiting; poll job_status for the result"`
}

type runShellIn struct {
	Script     string    `json:"script" jsonschema:"a POSIX shell script, run by /bin/sh in /workspace; write files to output/ to get them back"`
	Image      string    `json:"image,omitempty" jsonschema:"the image to run in, one of those the server allows; default: the server's first"`
	Files      []fileArg `json:"files,omitempty" jsonschema:"input files, placed under /workspace/mounts/"`
	TimeoutS   float64   `json:"timeout_s,omitempty" jsonschema:"seconds the script may run; default and maximum: the server's limit"`
	Background bool      `json:"background,omitempty" jsonschema:"return a job id at once instead of waiting; poll job_status for the result"`
}

type runTestsIn struct {
	Code         string     `json:"code" jsonschema:"Python source defining the function under test"`
	Function     string     `json:"function" jsonschema:"name of the function to test, or Class.method (the class is instantiated without arguments)"`
	Tests        []testCase `json:"tests" jsonschema:"the test cases; each calls the function once in a child process"`
	CaseTimeoutS float64    `json:"case_timeout_s,omitempty" jsonschema:"seconds one case may take; default 10"`
	TimeoutS     float64    `json:"timeout_s,omitempty" jsonschema:"seconds the whole test run may take; default and maximum: the server's limit"`
	Background   bool       `json:"background,omitempty" jsonschema:"return a job id at once instead of waiting; poll job_status for the result"`
}

// started is the output of a call run in the background.
type started struct {
	Job    string `json:"job" jsonschema:"the job id for job_status and job_cancel"`
	Status string `json:"status" jsonschema:"always started"`
}

func (s *server) files(owner string, args []fileArg) ([]inputFile, error) {
	var out []inputFile
	for _, f := range args {
		in, err := s.inputFile(owner, f)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// runTool runs a one-shot call, in the foreground with progress
// notifications, or in the background as a job. run produces the final
// result.
func (s *server) runTool(ctx context.Context, req *mcp.CallToolRequest, c *call, tool string, background bool, limit time.Duration,
	run func(ctx context.Context, c *call) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if background {
		id, err := s.jobs.start(s, c.owner, tool, "", limit, nil, "", "", run)
		if err != nil {
			return nil, err
		}
		c.job = id
		res, n := result(started{Job: id, Status: "started"})
		c.bytes = n
		return res, nil
	}
	stop := s.progress(ctx, req, limit, tool)
	defer stop()
	return run(ctx, c)
}

// runOutputResult makes the tool result of a run, its artifacts as content.
func (s *server) runOutputResult(owner string, c *call, r runResult) *mcp.CallToolResult {
	extra, infos, inlined := s.artifactContent(owner, r.artifacts)
	r.out.Artifacts = infos
	res, n := result(r.out, extra...)
	if c != nil {
		c.setExit(r.out.ExitCode)
		c.bytes = n + int(inlined)
	}
	return res
}

func (s *server) addRunTools(srv *mcp.Server) {
	addTool[runPythonIn, any](s, srv, &mcp.Tool{
		Name: "run_python",
		Description: "Run a Python 3 program in a fresh, isolated sandbox (no network, read-only system, memory and time limits) that is deleted afterwards. " +
			"Returns stdout, stderr, exit status, the Python exception if one ended the program (type, message, traceback, line in your code), suggestions, and the files written under output/: " +
			"images come back as images you can see, other files as resources or links. Use a session (session_create) to keep files or installed packages between calls.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in runPythonIn) (*mcp.CallToolResult, error) {
		if err := s.box.agentRuns(); err != nil {
			return nil, err
		}
		files, err := s.files(c.owner, in.Files)
		if err != nil {
			return nil, err
		}
		spec := runSpec{Image: s.cfg.Images[0], Requirements: in.Requirements, Files: files, Timeout: s.timeout(in.TimeoutS)}
		res, err := s.runTool(ctx, req, c, "run_python", in.Background, spec.Timeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			r, err := s.box.runPython(ctx, in.Code, c.live(spec))
			if err != nil {
				return nil, err
			}
			return s.runOutputResult(c.owner, c, r), nil
		})
		return res, err
	})

	addTool[runShellIn, any](s, srv, &mcp.Tool{
		Name: "run_shell",
		Description: "Run a shell script (/bin/sh) in a fresh, isolated sandbox (no network, read-only system, memory and time limits) that is deleted afterwards. " +
			"Returns stdout, stderr, exit status and the files written under output/ (images shown as images).",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in runShellIn) (*mcp.CallToolResult, error) {
		if err := s.box.agentRuns(); err != nil {
			return nil, err
		}
		img, err := s.image(in.Image)
		if err != nil {
			return nil, err
		}
		files, err := s.files(c.owner, in.Files)
		if err != nil {
			return nil, err
		}
		spec := runSpec{Image: img, Files: files, Timeout: s.timeout(in.TimeoutS)}
		res, err := s.runTool(ctx, req, c, "run_shell", in.Background, spec.Timeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			r, err := s.box.runShell(ctx, in.Script, c.live(spec))
			if err != nil {
				return nil, err
			}
			return s.runOutputResult(c.owner, c, r), nil
		})
		return res, err
	})

	addTool[runTestsIn, any](s, srv, &mcp.Tool{
		Name: "run_tests",
		Description: "Check a Python function against test cases in a fresh sandbox: each case calls the function in a child process and compares the result (or raised exception) with what you expect, " +
			"run and reported by pytest. Returns a verdict per case (what was returned, what was expected, why it failed) and what to fix next. Nothing the code prints can change a verdict.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, c *call, in runTestsIn) (*mcp.CallToolResult, error) {
		if err := s.box.agentRuns(); err != nil {
			return nil, err
		}
		if len(in.Tests) == 0 {
			return nil, toolErrorf("tests is empty: give at least one case, e.g. {\"args\": [2, 3], \"expected\": 5}")
		}
		if in.Function == "" {
			return nil, toolErrorf("function is empty: name the function of code to test")
		}
		spec := runSpec{Image: s.cfg.Images[0], Timeout: s.timeout(in.TimeoutS)}
		caseTimeout := min(time.Duration(in.CaseTimeoutS*float64(time.Second)), spec.Timeout)
		res, err := s.runTool(ctx, req, c, "run_tests", in.Background, spec.Timeout, func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			release, err := s.acquire(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			out, err := s.box.runTests(ctx, in.Code, in.Function, in.Tests, caseTimeout, c.live(spec))
			if err != nil {
				return nil, err
			}
			res, n := result(out)
			c.bytes = n
			c.setExit(out.Run.ExitCode)
			return res, nil
		})
		return res, err
	})
}
