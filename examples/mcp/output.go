package main

// The tools' results, as the model and structured clients see them. Their
// JSON schemas are the tools' output schemas.

// runOutput is what one program run did.
type runOutput struct {
	Status           string         `json:"status" jsonschema:"how the run ended: ok (exit 0), exception (a Python exception, see error), exit (non-zero exit), signal, timeout (killed at timeout_s), oom (killed at the memory limit), install (requirements failed to install; the program never ran)"`
	ExitCode         int            `json:"exit_code" jsonschema:"the program's exit code (-1 when it was killed)"`
	Stdout           string         `json:"stdout" jsonschema:"standard output; when truncated, its head and tail with a marker between them"`
	Stderr           string         `json:"stderr" jsonschema:"standard error; when truncated, its head and tail with a marker between them"`
	StdoutTruncated  bool           `json:"stdout_truncated,omitempty" jsonschema:"stdout was longer than the server's output limit"`
	StderrTruncated  bool           `json:"stderr_truncated,omitempty" jsonschema:"stderr was longer than the server's output limit"`
	DurationMS       int64          `json:"duration_ms" jsonschema:"wall time of the run in milliseconds"`
	TimeoutS         float64        `json:"timeout_s" jsonschema:"the timeout the run had, in seconds"`
	PeakMemoryBytes  int64          `json:"peak_memory_bytes,omitempty" jsonschema:"peak resident memory of the largest process"`
	MemoryLimit      int64          `json:"memory_limit_bytes,omitempty" jsonschema:"the sandbox's memory limit"`
	Error            *pyError       `json:"error,omitempty" jsonschema:"the Python exception that ended the run, read from the traceback"`
	Feedback         []string       `json:"feedback,omitempty" jsonschema:"suggestions for the next attempt, most important first"`
	Artifacts        []artifactInfo `json:"artifacts,omitempty" jsonschema:"files the program wrote under output/ (in a session: created or changed by this call)"`
	ArtifactsDropped int            `json:"artifacts_dropped,omitempty" jsonschema:"files under output/ past the most a result lists"`
	Install          *installInfo   `json:"install,omitempty" jsonschema:"the requirements install, when there was one"`
}

// pyError is a Python exception.
type pyError struct {
	Type      string `json:"type" jsonschema:"the exception's class, e.g. ValueError"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
	File      string `json:"file,omitempty" jsonschema:"where in your code it was raised"`
	Line      int    `json:"line,omitempty"`
}

// artifactInfo describes one file under output/ and how it came back.
type artifactInfo struct {
	Name       string `json:"name"`
	Path       string `json:"path" jsonschema:"path relative to output/"`
	Size       int64  `json:"size"`
	MIMEType   string `json:"mime_type"`
	ReturnedAs string `json:"returned_as" jsonschema:"image (image content), resource (embedded resource content), link (a resource link: read it with resources/read or pass its uri to session_write_file), omitted (over the server's limits)"`
	URI        string `json:"uri,omitempty"`
}

// installInfo is a requirements install.
type installInfo struct {
	OK       bool     `json:"ok"`
	Cached   bool     `json:"cached,omitempty"`
	Packages []string `json:"packages,omitempty" jsonschema:"what the environment holds (pip freeze)"`
	Output   string   `json:"output,omitempty" jsonschema:"pip's output when the install failed"`
}

// testOutput is a run_tests report.
type testOutput struct {
	AllPassed   bool         `json:"all_passed"`
	Passed      int          `json:"passed"`
	Failed      int          `json:"failed"`
	Cases       []caseResult `json:"cases"`
	ImportError *pyError     `json:"import_error,omitempty" jsonschema:"set when the code failed to import; no case ran"`
	Feedback    []string     `json:"feedback,omitempty" jsonschema:"what to fix before retrying, most important first"`
	Run         runOutput    `json:"run" jsonschema:"the pytest run itself"`
}

// caseResult is one test case's verdict.
type caseResult struct {
	Name       string `json:"name"`
	Passed     bool   `json:"passed"`
	Output     string `json:"output,omitempty" jsonschema:"what the call returned (repr) or raised"`
	Expected   string `json:"expected,omitempty"`
	Detail     string `json:"detail,omitempty" jsonschema:"why the case failed"`
	Stdout     string `json:"stdout,omitempty"`
	Stderr     string `json:"stderr,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	ErrorType  string `json:"error_type,omitempty"`
}
