package diagnose

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/egress"
	"github.com/swebox/swebox/agent/traceback"
)

// maxCaseFeedback is how many failed cases TestFeedback names.
const maxCaseFeedback = 3

// Feedback turns a result into short, actionable suggestions for the next
// attempt, the most important first. A clean successful run gives none. It
// is a pure function of r.
func Feedback(r agent.Result) []string {
	var out []string
	switch r.Kind {
	case agent.KindInstall:
		out = append(out, installFeedback(r.Install))
	case agent.KindTimeout:
		out = append(out, fmt.Sprintf("The program was stopped at its %s timeout. Look for an infinite loop or a call that waits (input(), a socket, a lock), or do less work per run.", fmtDuration(r.Timeout)))
	case agent.KindOOM:
		out = append(out, fmt.Sprintf("The program was killed for running out of memory (%s). Process the data in chunks or with generators, and drop large objects you no longer need.", memoryText(r)))
	case agent.KindException:
		out = append(out, exceptionFeedback(r.Error, r.MemoryLimit))
	case agent.KindSignal:
		out = append(out, fmt.Sprintf("The program was killed by signal %d%s. A crash in native code (a segmentation fault) or a process that killed itself would do this.", r.Signal, signalName(r.Signal)))
	case agent.KindExit:
		msg := fmt.Sprintf("The program exited with status %d", r.ExitCode)
		if l := lastLine(r.Stderr.String()); l != "" {
			msg += ": " + quote(l, 200)
		}
		out = append(out, msg+".")
	}
	out = append(out, egressFeedback(r.Egress)...)
	if r.Kind == agent.KindOK {
		if r.MemoryLimit > 0 && r.PeakMemory*10 >= r.MemoryLimit*9 {
			out = append(out, fmt.Sprintf("The run peaked at %s of its %s memory limit; a larger input will be killed.", fmtBytes(r.PeakMemory), fmtBytes(r.MemoryLimit)))
		}
		if r.Timeout > 0 && r.Duration*10 >= r.Timeout*8 {
			out = append(out, fmt.Sprintf("The run took %s of its %s timeout; a larger input will time out.", fmtDuration(r.Duration), fmtDuration(r.Timeout)))
		}
	}
	for _, s := range []struct {
		name    string
		dropped int64
	}{{"output", r.Stdout.Dropped}, {"error output", r.Stderr.Dropped}} {
		if s.dropped > 0 {
			out = append(out, fmt.Sprintf("The %s was cut (%s dropped from the middle): print less, or write large results to files under output/.", s.name, fmtBytes(s.dropped)))
		}
	}
	if r.ArtifactsDropped > 0 {
		out = append(out, fmt.Sprintf("%d more files under output/ were not returned: write fewer files, or one archive.", r.ArtifactsDropped))
	}
	tooBig := 0
	for _, a := range r.Artifacts {
		if a.Data == nil && a.Size > 0 {
			tooBig++
		}
	}
	if tooBig > 0 {
		out = append(out, fmt.Sprintf("%d files under output/ were too large to return in full: write smaller files.", tooBig))
	}
	return out
}

// TestFeedback turns a test report into suggestions: why the code could not
// be tested, or which cases failed and how. All cases passing gives none.
func TestFeedback(rep agent.TestReport) []string {
	if rep.ImportError != nil {
		return []string{"The code failed to import, so no case ran. " + exceptionFeedback(rep.ImportError, rep.Run.MemoryLimit)}
	}
	var out []string
	if rep.Run.Kind == agent.KindTimeout || rep.Run.Kind == agent.KindOOM || rep.Run.Kind == agent.KindInstall {
		out = append(out, Feedback(rep.Run)...)
	}
	named := 0
	for _, c := range rep.Cases {
		if c.Passed {
			continue
		}
		if named == maxCaseFeedback {
			break
		}
		named++
		msg := fmt.Sprintf("%s failed", c.Name)
		if c.Detail != "" {
			msg += ": " + quote(c.Detail, 300)
		}
		if c.TimedOut {
			msg += " (look for an infinite loop, or a slow algorithm on this input)"
		}
		out = append(out, msg+".")
	}
	if rest := rep.Failed - named; rest > 0 {
		out = append(out, fmt.Sprintf("%d more cases failed.", rest))
	}
	if rep.Failed > 0 && rep.Passed > 0 {
		out = append(out, fmt.Sprintf("%d of %d cases pass: keep what works and fix the failing inputs.", rep.Passed, len(rep.Cases)))
	}
	return out
}

var (
	noModuleRe = regexp.MustCompile(`No module named '([^']+)'`)
	networkRe  = regexp.MustCompile(`Temporary failure in name resolution|Name or service not known|Network is unreachable|\[Errno -[23]\]|\[Errno 101\]`)
)

// exceptionFeedback suggests a fix for one Python exception.
func exceptionFeedback(e *traceback.Exception, memLimit int64) string {
	if e == nil {
		return "The program raised an exception."
	}
	where := ""
	if f, ok := e.UserFrame(agent.ScriptDir); ok {
		where = fmt.Sprintf(" at line %d", f.Line)
		if f.Func != "" && f.Func != "<module>" {
			where += " in " + f.Func + "()"
		}
	}
	msg := strings.TrimRight(quote(firstLine(e.Message), 300), ".")
	switch {
	case e.Type == "ModuleNotFoundError" || e.Type == "ImportError" && noModuleRe.MatchString(e.Message):
		if m := noModuleRe.FindStringSubmatch(e.Message); m != nil {
			pkg := strings.SplitN(m[1], ".", 2)[0]
			return fmt.Sprintf("Module %q is not installed%s: add its package to Requirements, or use the standard library.", pkg, where)
		}
		return fmt.Sprintf("%s%s: %s. Check the module name, or add its package to Requirements.", e.Type, where, msg)
	case e.Type == "SyntaxError" || e.Type == "IndentationError" || e.Type == "TabError":
		return fmt.Sprintf("Fix the %s%s: %s.", e.Type, where, msg)
	case e.Type == "MemoryError":
		return fmt.Sprintf("The program ran out of memory%s (limit %s). Process the data in chunks, or use more compact structures.", where, fmtBytes(memLimit))
	case e.Type == "RecursionError":
		return fmt.Sprintf("Recursion went too deep%s: rewrite it as a loop, or memoize repeated calls.", where)
	case e.Type == "FileNotFoundError":
		return fmt.Sprintf("A file was not found%s: %s. Input files are under mounts/ in the working directory; write results under output/.", where, msg)
	case e.Type == "PermissionError" || e.Type == "OSError" && strings.Contains(e.Message, "Read-only file system"):
		return fmt.Sprintf("%s%s: %s. Only /workspace and /tmp are writable.", e.Type, where, msg)
	case networkRe.MatchString(e.Message):
		return fmt.Sprintf("%s%s: %s. The sandbox has no network access unless egress to the host is granted.", e.Type, where, msg)
	case e.Type == "NameError":
		return fmt.Sprintf("NameError%s: %s. Define or import the name before using it.", where, msg)
	}
	return fmt.Sprintf("%s%s: %s.", e.Type, where, msg)
}

func installFeedback(in *agent.Install) string {
	if in == nil {
		return "Installing the requirements failed."
	}
	if in.TimedOut {
		return "Installing the requirements timed out: install fewer or smaller packages, or give the install a longer Timeout."
	}
	msg := fmt.Sprintf("Installing the requirements failed (pip exited %d)", in.ExitCode)
	if l := lastLine(in.Stderr.String()); l != "" {
		msg += ": " + quote(l, 300)
	}
	return msg + ". Check the package names and versions, and that the wheel directory or index has them."
}

func egressFeedback(events []egress.Event) []string {
	var out []string
	seen := map[string]bool{}
	for _, ev := range events {
		if ev.Allowed {
			continue
		}
		hp := ev.Host + ":" + ev.Port
		if seen[hp] {
			continue
		}
		seen[hp] = true
		if len(out) == maxCaseFeedback {
			break
		}
		out = append(out, fmt.Sprintf("Network access to %s was refused (%s): the code may only reach the hosts it was granted.", hp, ev.Reason))
	}
	return out
}

func memoryText(r agent.Result) string {
	s := "limit " + fmtBytes(r.MemoryLimit)
	if r.PeakMemory > 0 {
		s += ", peak " + fmtBytes(r.PeakMemory)
	}
	return s
}

var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}

func signalName(n int) string {
	if s, ok := signalNames[n]; ok {
		return " (" + s + ")"
	}
	return ""
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// quote cuts s to n bytes for a suggestion.
func quote(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// lastLine returns the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
