package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/swebox/swebox/agent/traceback"
	"github.com/swebox/swebox/pytestparse"
)

// DefaultCaseTimeout bounds one test case's call.
const DefaultCaseTimeout = 10 * time.Second

// TestCase is one call of the function under test and what it must do.
// Values travel as JSON: Args, Kwargs and Expected must marshal, and a
// returned tuple compares equal to a list.
type TestCase struct {
	// Name identifies the case in results. Default: "case <index>".
	Name string
	// Args and Kwargs are passed to the function.
	Args   []any
	Kwargs map[string]any
	// Expected is the value the call must return (compared with ==, floats
	// within the request's tolerances, bool never equal to a number). It is
	// checked when set, or when neither ExpectedType nor ExpectedError is:
	// a case with nothing set expects None.
	Expected any
	// ExpectedType is the name of the returned value's class or of one of
	// the classes in its MRO, e.g. "int", "list", "object" (abstract base
	// classes such as "Mapping" are not in the MRO of dict).
	ExpectedType string
	// ExpectedError is the name of the exception class the call must raise
	// (or of one of its bases, e.g. "LookupError" admits KeyError).
	ExpectedError string
	// Timeout bounds this case's call. Default: the request's CaseTimeout.
	Timeout time.Duration
}

// TestRequest runs the function Function of Code against Cases. Each case
// is a parametrized pytest test that runs the call in a child process of
// its own and compares the outcome there, in pytest; the verdicts are read
// from pytest's report with pytestparse. Nothing the code prints can change
// a verdict: its output goes to files; pytest's process and the exec agent
// are non-dumpable, so the code cannot open their descriptors through /proc;
// a seccomp filter refuses it ptrace, process_vm_readv/writev and
// pidfd_getfd; the launcher above pytest keeps no copy of pytest's output;
// a pytest run that did not end by itself gives no verdicts; and the
// expected values are deleted from disk before the first call. (In a
// session, a process an earlier call left running is under no such filter:
// it could read the expected values in that moment, or trace pytest before
// it makes itself non-dumpable; use a one-shot run where that matters.)
type TestRequest struct {
	Code string
	// Function is the name of a function of Code, or "Class.method" (the
	// class is instantiated without arguments).
	Function string
	Cases    []TestCase
	// CaseTimeout bounds each call. Default: DefaultCaseTimeout.
	CaseTimeout time.Duration
	// RelTol and AbsTol make float comparisons approximate
	// (math.isclose). Default: exact.
	RelTol, AbsTol float64
}

// CaseResult is the verdict of one case.
type CaseResult struct {
	Name   string
	Passed bool
	// Output is what the call returned (its repr) or raised.
	Output string
	// Expected describes what the case expected.
	Expected string
	// Detail says why the case failed.
	Detail string
	// Stdout and Stderr are what the call printed (the first 64 KiB).
	Stdout, Stderr string
	// Duration is the call's own time, import excluded.
	Duration time.Duration
	TimedOut bool
	// ErrorType is the exception the call raised, if any.
	ErrorType string
}

// TestReport holds one result per case, in the order of the request.
type TestReport struct {
	Cases          []CaseResult
	Passed, Failed int
	// ImportError is set when the code failed to import.
	ImportError *traceback.Exception
	// Run is the pytest run itself: its output, how it ended, its usage.
	Run Result
}

// AllPassed reports whether every case passed.
func (r TestReport) AllPassed() bool { return len(r.Cases) > 0 && r.Failed == 0 }

type caseJSON struct {
	ID            string         `json:"id"`
	Args          []any          `json:"args"`
	Kwargs        map[string]any `json:"kwargs"`
	Expected      any            `json:"expected"`
	ExpectedType  string         `json:"expected_type,omitempty"`
	ExpectedError string         `json:"expected_error,omitempty"`
	CheckValue    bool           `json:"check_value"`
	Timeout       float64        `json:"timeout"`
}

// caseReport is what the harness writes per case.
type caseReport struct {
	Got      string  `json:"got"`
	Detail   string  `json:"detail"`
	Stdout   string  `json:"stdout"`
	Stderr   string  `json:"stderr"`
	Duration float64 `json:"duration"`
	TimedOut bool    `json:"timed_out"`
	Error    *struct {
		Type      string `json:"exc_type"`
		Message   string `json:"message"`
		Traceback string `json:"traceback"`
		Phase     string `json:"phase"`
	} `json:"error"`
}

// RunTests runs req in a fresh sandbox, like RunPython.
func (m *Manager) RunTests(ctx context.Context, req TestRequest, opts RunOptions) (TestReport, error) {
	j, rep, err := testsJob(req)
	if err != nil {
		return TestReport{}, err
	}
	so, eo := opts.split()
	eo.Args = nil // they would go to pytest
	res, err := m.oneShot(ctx, so, eo, j)
	rep.Run = res
	return *rep, err
}

// RunTests runs req in the session; the code sees the session's workspace
// and environment.
func (s *Session) RunTests(ctx context.Context, req TestRequest, opts ExecOptions) (TestReport, error) {
	j, rep, err := testsJob(req)
	if err != nil {
		return TestReport{}, err
	}
	opts.Args = nil // they would go to pytest
	res, err := s.run(ctx, opts, j)
	rep.Run = res
	return *rep, err
}

const harnessNode = "harness_test.py::test_case[%s]"

// testsJob builds the pytest run of req; the report is filled in after it.
func testsJob(req TestRequest) (job, *TestReport, error) {
	if req.Function == "" {
		return job{}, nil, optErr("TestRequest.Function", "required")
	}
	if len(req.Cases) == 0 {
		return job{}, nil, optErr("TestRequest.Cases", "no cases")
	}
	caseTimeout := req.CaseTimeout
	if caseTimeout <= 0 {
		caseTimeout = DefaultCaseTimeout
	}
	cases := make([]caseJSON, len(req.Cases))
	var total time.Duration
	for i, c := range req.Cases {
		t := c.Timeout
		if t <= 0 {
			t = caseTimeout
		}
		total += t
		cases[i] = caseJSON{
			ID: "c" + strconv.Itoa(i), Args: c.Args, Kwargs: c.Kwargs, Expected: c.Expected,
			ExpectedType: c.ExpectedType, ExpectedError: c.ExpectedError,
			CheckValue: c.Expected != nil || c.ExpectedType == "" && c.ExpectedError == "",
			Timeout:    t.Seconds(),
		}
		if cases[i].Args == nil {
			cases[i].Args = []any{}
		}
		if cases[i].Kwargs == nil {
			cases[i].Kwargs = map[string]any{}
		}
	}
	rep := &TestReport{}
	// pytest runs in its own directory, so node ids are plain; the cases
	// run in /workspace.
	j := job{timeout: total + 30*time.Second, workdir: libTarget}
	j.write = func(d *runDir) ([]string, map[string]string, error) {
		if err := d.write("solution.py", []byte(req.Code)); err != nil {
			return nil, nil, err
		}
		data, err := json.Marshal(map[string]any{
			"code": d.path("solution.py"), "function": req.Function, "cases": cases,
			"timeout": caseTimeout.Seconds(), "rel_tol": req.RelTol, "abs_tol": req.AbsTol,
		})
		if err != nil {
			return nil, nil, optErr("TestRequest.Cases", "not JSON: %v", err)
		}
		if err := d.write("cases.json", data); err != nil {
			return nil, nil, err
		}
		argv := []string{"python3", "-I", "-m", "pytest", "-c", libTarget + "/pytest.ini", "--rootdir", libTarget,
			"--noconftest", "-p", "no:cacheprovider", "-v", "-rA", "--tb=short", "--color=no",
			"-o", "console_output_style=classic", libTarget + "/harness_test.py"}
		env := map[string]string{
			"SWEBOX_TC_DIR":                  d.path(""),
			"SWEBOX_NO_VENV":                 "1", // pytest runs on the image's python; the cases on the venv's
			"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
			"PYTHONDONTWRITEBYTECODE":        "1",
			"CI":                             "1", // pytest keeps summary messages whole on CI
			"COLUMNS":                        "200",
			// The launcher keeps no copy of pytest's output: the code
			// under test may trace it (see launch.py).
			"SWEBOX_HAND_OFF_STDIO": "1",
		}
		return argv, env, nil
	}
	j.after = func(d *runDir, mk masker, res *Result) {
		report := pytestparse.ParseString(res.Stdout.String())
		// Verdicts count only from a pytest run that ended by itself (0:
		// all passed, 1: some failed). A run that was killed, interrupted
		// or timed out may have had lines written into its output.
		finished := res.Kind != KindTimeout && (res.ExitCode == 0 || res.ExitCode == 1) && report.Summary.Seen
		for i, c := range req.Cases {
			cr := CaseResult{Name: c.Name, Expected: describeExpected(c)}
			if cr.Name == "" {
				cr.Name = "case " + strconv.Itoa(i)
			}
			id := cases[i].ID
			t, ok := report.Test(fmt.Sprintf(harnessNode, id))
			cr.Passed = finished && ok && t.Outcome == pytestparse.Passed
			var cp caseReport
			if b, err := d.read("results/" + id + ".report.json"); err == nil && json.Unmarshal(b, &cp) == nil {
				cr.Output, cr.Detail = mk.string(cp.Got), mk.string(cp.Detail)
				cr.Stdout, cr.Stderr = mk.string(cp.Stdout), mk.string(cp.Stderr)
				cr.Duration = time.Duration(cp.Duration * float64(time.Second))
				cr.TimedOut = cp.TimedOut
				if cp.Error != nil {
					cr.ErrorType = cp.Error.Type
					if cp.Error.Phase == "import" && rep.ImportError == nil {
						rep.ImportError = traceback.Parse(mk.string(cp.Error.Traceback))
						if rep.ImportError == nil {
							rep.ImportError = &traceback.Exception{Type: cp.Error.Type, Message: mk.string(cp.Error.Message)}
						}
					}
				}
			}
			switch {
			case !finished:
				cr.Detail = strings.TrimSuffix(fmt.Sprintf("the test run did not finish (%s, exit status %d); %s", res.Kind, res.ExitCode, cr.Detail), "; ")
			case !ok && cr.Detail == "":
				cr.Detail = "pytest reported no verdict for this case"
				if l := lastLine(res.Stderr.String()); l != "" {
					cr.Detail += ": " + l
				}
			case ok && !cr.Passed && cr.Detail == "":
				cr.Detail = mk.string(t.Message)
			}
			if cr.Passed {
				rep.Passed++
			} else {
				rep.Failed++
			}
			rep.Cases = append(rep.Cases, cr)
		}
	}
	return j, rep, nil
}

// describeExpected is the Expected text of a case's result.
func describeExpected(c TestCase) string {
	if c.ExpectedError != "" {
		return "raises " + c.ExpectedError
	}
	var s string
	if c.Expected != nil || c.ExpectedType == "" {
		b, err := json.Marshal(c.Expected)
		if err != nil {
			b = []byte(fmt.Sprint(c.Expected))
		}
		s = string(b)
	}
	if c.ExpectedType != "" {
		if s != "" {
			return s + " (" + c.ExpectedType + ")"
		}
		return "a " + c.ExpectedType
	}
	return s
}
