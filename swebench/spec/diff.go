package spec

import (
	"regexp"
	"strings"
)

// nonTestExts are the official NON_TEST_EXTS: paths ending in these are not
// test directives. "csv" has no dot in the official list, so "foocsv"
// matches too.
var nonTestExts = []string{".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml"}

// diffGitB is the official directive pattern `diff --git a/.* b/(.*)`. Like
// Python's re.findall it is not anchored: it also matches inside lines (a
// test patch that adds a fixture containing a diff yields extra
// directives, as it does officially), and greedy ".*" takes the last " b/".
var diffGitB = regexp.MustCompile(`diff --git a/.* b/(.*)`)

// DirectiveStyle says how test directives are derived from test_patch.
type DirectiveStyle string

// Directive styles.
const (
	// DirectivesFiles: the paths of the test patch, minus non-test
	// extensions (the official default).
	DirectivesFiles DirectiveStyle = "files"
	// DirectivesDjango: as files, then drop ".py", drop a leading "tests/"
	// and turn "/" into "." (Django's runtests.py takes dotted modules).
	DirectivesDjango DirectiveStyle = "django"
	// DirectivesNone: the test command takes no directives.
	DirectivesNone DirectiveStyle = "none"
	// directivesHumanEval: always "test.py" (official swe-bench/humaneval).
	directivesHumanEval DirectiveStyle = "humaneval"
)

func (s DirectiveStyle) valid() bool {
	switch s {
	case DirectivesFiles, DirectivesDjango, DirectivesNone:
		return true
	}
	return false
}

// Directives derives test directives from a test patch the way the
// official get_test_directives does.
func Directives(testPatch string, style DirectiveStyle) []string {
	switch style {
	case DirectivesNone:
		return nil
	case directivesHumanEval:
		return []string{"test.py"}
	}
	var out []string
	for _, m := range diffGitB.FindAllStringSubmatch(testPatch, -1) {
		d := m[1]
		if hasNonTestExt(d) {
			continue
		}
		if style == DirectivesDjango {
			d = strings.TrimSuffix(d, ".py")
			d = strings.TrimPrefix(d, "tests/")
			d = strings.ReplaceAll(d, "/", ".")
		}
		out = append(out, d)
	}
	return out
}

func hasNonTestExt(path string) bool {
	for _, ext := range nonTestExts {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

// ModifiedFiles returns the files of a patch that exist before it applies,
// as the official get_modified_files does with unidiff: each file's source
// name (from "diff --git a/X b/Y", replaced by a "--- " line when there is
// one, and /dev/null for "new file mode"), keeping only names that start
// with "a/", with that prefix removed. These are the test files the eval
// script resets to base_commit.
func ModifiedFiles(patch string) []string {
	var out []string
	source := ""
	inFile := false
	flush := func() {
		if inFile && source != "/dev/null" && strings.HasPrefix(source, "a/") {
			out = append(out, source[2:])
		}
	}
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			inFile = true
			source = gitHeaderSource(line)
		case !inFile:
		case strings.HasPrefix(line, "new file mode "):
			source = "/dev/null"
		case strings.HasPrefix(line, "--- "):
			name := line[len("--- "):]
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i] // unidiff drops a timestamp after a tab
			}
			source = name
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "@@ "):
			// The header ends at the first hunk; later "--- " lines are
			// removed lines of content, not file names.
			if strings.HasPrefix(line, "@@ ") {
				flush()
				inFile = false
			}
		}
	}
	flush()
	return out
}

// gitHeaderSource returns "a/X" from "diff --git a/X b/Y". Names with
// spaces are split at the last " b/", as unidiff's greedy pattern does.
func gitHeaderSource(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[:i]
	}
	return rest
}
