package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrNoDependencyFile: none of the paths where upstream looks for a
// repository's requirements file or environment.yml exists at the commit
// (upstream raises ValueError).
var ErrNoDependencyFile = errors.New("dependency file not found")

// DependencyFileError says which repository, commit and paths were tried.
type DependencyFileError struct {
	Repo   string
	Commit string
	Paths  []string
	Err    error
}

func (e *DependencyFileError) Error() string {
	return fmt.Sprintf("no file at %s in %s at %s: %v", strings.Join(e.Paths, ", "), e.Repo, e.Commit, e.Err)
}

func (e *DependencyFileError) Unwrap() []error { return []error{ErrNoDependencyFile, e.Err} }

// replaceReqPackages is REPLACE_REQ_PACKAGES: packages yanked from PyPI and
// their replacements.
var replaceReqPackages = [][2]string{{"types-pkg_resources", "types-setuptools"}}

// Python's \s on str patterns; Go's \s lacks \v and the Unicode spaces.
const pySpace = `[\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

func isPySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStrip(s string) string  { return strings.TrimFunc(s, isPySpace) }
func pyLstrip(s string) string { return strings.TrimLeftFunc(s, isPySpace) }

// text is how the requests library hands a raw.githubusercontent.com body
// to upstream: decoded as UTF-8 (the charset GitHub declares), invalid
// bytes replaced.
func text(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// firstFile reads the first of paths that exists (upstream's loop that
// breaks on status 200).
func firstFile(ctx context.Context, files Files, repo, commit string, paths []string) (string, string, error) {
	var errs []error
	for _, p := range paths {
		data, err := files.ReadFile(ctx, repo, commit, p)
		if err == nil {
			return p, text(data), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		errs = append(errs, err)
	}
	return "", "", &DependencyFileError{Repo: repo, Commit: commit, Paths: paths, Err: errors.Join(errs...)}
}

// requirementsByCommit is get_requirements_by_commit: the repository's
// requirements file, its "-r" includes inlined first, lines starting with
// "-e .", "#" or ".[test" dropped.
func requirementsByCommit(ctx context.Context, files Files, repo, commit string) (string, error) {
	paths, ok := reqsPathsV410[repo]
	if !ok {
		return "", fmt.Errorf("%s has no requirements paths in the official table (upstream raises KeyError)", repo)
	}
	reqPath, body, err := firstFile(ctx, files, repo, commit, paths)
	if err != nil {
		return "", err
	}
	exclude := func(line string) bool {
		s := pyStrip(line)
		return strings.HasPrefix(s, "-e .") || strings.HasPrefix(s, "#") || strings.HasPrefix(s, ".[test")
	}
	reqDir := reqPath[:max(strings.LastIndex(reqPath, "/"), 0)]
	var original, additional []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(pyStrip(line), "-r") {
			if !exclude(line) {
				original = append(original, line)
			}
			continue
		}
		// line[len("-r"):] as upstream slices it, whatever precedes "-r".
		name := pyStrip(sliceRunes(line, 2))
		data, err := files.ReadFile(ctx, repo, commit, joinURLPath(reqDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // upstream ignores an include it cannot download
		}
		if err != nil {
			return "", err
		}
		for _, extra := range strings.Split(text(data), "\n") {
			if !exclude(extra) {
				additional = append(additional, extra)
			}
		}
	}
	additional = append(additional, strings.Join(original, "\n"))
	return strings.Join(additional, "\n"), nil
}

// sliceRunes is Python's s[n:] on a str.
func sliceRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[i:]
		}
		n--
	}
	return ""
}

// joinURLPath is the path part of upstream's os.path.join(RAW, repo,
// commit, req_dir, file_name).
func joinURLPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// cleanRequirements is clean_requirements.
func cleanRequirements(s string) string {
	for _, rp := range replaceReqPackages {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(rp[0]) + `([<>=!~]=?.*|$)`)
		s = re.ReplaceAllLiteralString(s, rp[1])
	}
	return s
}

// environmentYMLByCommit is get_environment_yml_by_commit: the first
// environment.yml found, its "name:" lines renamed to envName.
func environmentYMLByCommit(ctx context.Context, files Files, repo, commit, envName string) (string, error) {
	paths, ok := envYMLPathsV410[repo]
	if !ok {
		return "", fmt.Errorf("%s has no environment.yml paths in the official table (upstream raises KeyError)", repo)
	}
	_, body, err := firstFile(ctx, files, repo, commit, paths)
	if err != nil {
		return "", err
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "name:") {
			lines[i] = "name: " + envName
		}
	}
	return strings.Join(lines, "\n"), nil
}

var pipSection = regexp.MustCompile(`(?m)^(` + pySpace + `*-` + pySpace + `*pip` + pySpace + `*:` + pySpace + `*\n)`)

// cleanEnvironmentYML is clean_environment_yml: yanked packages replaced
// in the pip section only.
func cleanEnvironmentYML(yml string) string {
	m := pipSection.FindStringSubmatchIndex(yml)
	if m == nil {
		return yml
	}
	group := yml[m[2]:m[3]]
	pipIndent := utf8.RuneCountInString(group) - utf8.RuneCountInString(pyLstrip(group))
	contentStart := m[1]
	after := strings.Split(yml[contentStart:], "\n")
	sectionEnd := len(yml)
	offset := contentStart
	for _, line := range after {
		if pyStrip(line) != "" {
			indent := utf8.RuneCountInString(line) - utf8.RuneCountInString(pyLstrip(line))
			if indent <= pipIndent {
				sectionEnd = offset
				break
			}
		}
		offset += len(line) + 1
	}
	prefix, pip, suffix := yml[:contentStart], yml[contentStart:sectionEnd], yml[sectionEnd:]
	for _, rp := range replaceReqPackages {
		re := regexp.MustCompile(`(?m)^(` + pySpace + `*-` + pySpace + `*)` + regexp.QuoteMeta(rp[0]) + `([<>=!~]=?.*|$)`)
		pip = re.ReplaceAllString(pip, "${1}"+strings.ReplaceAll(rp[1], "$", "$$"))
	}
	return prefix + pip + suffix
}
