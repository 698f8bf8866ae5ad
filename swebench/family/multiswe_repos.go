package family

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// MultiSWEResult is a TestResult of Multi-SWE-bench (test_result.py): the
// passed, failed and skipped tests, three disjoint sets, each sorted.
type MultiSWEResult struct {
	Passed, Failed, Skipped []string
}

// newMultiSWEResult is TestResult's __post_init__: the three sets, which
// must not overlap (the harness raises ValueError, and so the instance is
// an error, not a verdict).
func newMultiSWEResult(passed, failed, skipped []string) (MultiSWEResult, error) {
	set := func(l []string) map[string]bool {
		m := make(map[string]bool, len(l))
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	p, f, s := set(passed), set(failed), set(skipped)
	for _, pair := range []struct {
		a, b map[string]bool
		what string
	}{{p, f, "passed and failed"}, {p, s, "passed and skipped"}, {f, s, "failed and skipped"}} {
		for t := range pair.a {
			if pair.b[t] {
				return MultiSWEResult{}, fmt.Errorf("%s tests have %q in common", pair.what, t)
			}
		}
	}
	return MultiSWEResult{Passed: sortedKeys(p), Failed: sortedKeys(f), Skipped: sortedKeys(s)}, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// status is the test's status in the result: "PASS", "FAIL", "SKIP" or
// "NONE" (TestStatus).
func (r MultiSWEResult) statuses() map[string]string {
	m := map[string]string{}
	for _, t := range r.Passed {
		m[t] = "PASS"
	}
	for _, t := range r.Failed {
		m[t] = "FAIL"
	}
	for _, t := range r.Skipped {
		m[t] = "SKIP"
	}
	return m
}

// MultiSWEClass is one ported instance class of Multi-SWE-bench
// (multi_swe_bench/harness/repos/<lang>/<org>/<repo>.py): the fix-run.sh
// its instance image holds and its parse_log.
type MultiSWEClass struct {
	Org, Repo, Language string
	// FixRun is fix-run.sh with "{pr.repo}" where the class formats in the
	// repository's name.
	FixRun string
	// Parse is parse_log: the whole log of fix-run.sh to the tests'
	// results; an error where parse_log raises.
	Parse func(log string) (MultiSWEResult, error)
}

// FixRunScript is the class's fix-run.sh for a row, as its image holds it.
func (c *MultiSWEClass) FixRunScript(r MultiSWERow) string {
	return strings.ReplaceAll(c.FixRun, "{pr.repo}", r.Repo)
}

// MultiSWERepos lists the ported classes, "org/repo", sorted.
func MultiSWERepos() []string {
	out := make([]string, 0, len(multiSWEClasses))
	for k := range multiSWEClasses {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Python's str and re where they differ from Go's (as in swebench/logparse).
const pySpaceClass = `\t-\r\x1c-\x20\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

// pyRe compiles a Python re pattern written with \s, \S and \d, which mean
// more in Python than in Go.
func pyRe(p string) *regexp.Regexp {
	r := strings.NewReplacer(`\s`, `[`+pySpaceClass+`]`, `\S`, `[^`+pySpaceClass+`]`, `\d`, `\p{Nd}`)
	return regexp.MustCompile(r.Replace(p))
}

func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStripStr(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pySplitlines is Python's str.splitlines().
func pySplitlines(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		case '\r':
			out = append(out, string(rs[start:i]))
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			start = i + 1
			continue
		default:
			continue
		}
		out = append(out, string(rs[start:i]))
		start = i + 1
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// pyInt is Python's int() of a run of \d digits (any Unicode decimal).
func pyInt(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(digitValue(r))
	}
	return n
}

func digitValue(r rune) rune {
	if r >= '0' && r <= '9' {
		return r - '0'
	}
	// Unicode's decimal digits come in ranges that each start at a zero
	// and hold whole runs of ten.
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	return 0
}

// set is a Python set of test names.
type set map[string]bool

func (s set) list() []string { return sortedKeys(s) }

func result(p, f, s set) (MultiSWEResult, error) {
	return newMultiSWEResult(p.list(), f.list(), s.list())
}

// linesMatching runs each (stripped, and non-empty when skipEmpty) line
// through fn.
func eachLine(log string, skipEmpty bool, fn func(line string) error) error {
	for _, line := range pySplitlines(log) {
		line = pyStripStr(line)
		if skipEmpty && line == "" {
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	return nil
}

var multiSWEClasses = map[string]*MultiSWEClass{}

func registerMultiSWE(c *MultiSWEClass) { multiSWEClasses[c.Org+"/"+c.Repo] = c }

func init() {
	// java/alibaba/fastjson2.py: Maven Surefire's per-class summary lines.
	surefire := pyRe(`Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+), Time elapsed: [\d.]+ .+? in (.+)`)
	registerMultiSWE(&MultiSWEClass{Org: "alibaba", Repo: "fastjson2", Language: "java",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply /home/test.patch /home/fix.patch\n./mvnw -V --no-transfer-progress -Pgen-javadoc -Pgen-dokka clean test -Dsurefire.useFile=false -Dmaven.test.skip=false -DfailIfNoTests=false\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f, s := set{}, set{}, set{}
			// splitlines without strip, search not match.
			for _, line := range pySplitlines(log) {
				m := surefire.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				run, fails, errs, skipped, name := pyInt(m[1]), pyInt(m[2]), pyInt(m[3]), pyInt(m[4]), m[5]
				switch {
				case run > 0 && fails == 0 && errs == 0 && skipped != run:
					p[name] = true
				case fails > 0 || errs > 0:
					f[name] = true
				case skipped == run:
					s[name] = true
				}
			}
			return result(p, f, s)
		}})

	// golang/cli/cli.py: go test -v.
	goPass, goSkip := pyRe(`^--- PASS: (\S+)`), pyRe(`^--- SKIP: (\S+)`)
	goFail := []*regexp.Regexp{pyRe(`^--- FAIL: (\S+)`), pyRe(`^FAIL:?\s?(.+?)\s`)}
	registerMultiSWE(&MultiSWEClass{Org: "cli", Repo: "cli", Language: "go",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply /home/test.patch /home/fix.patch\ngo test -v -count=1 ./...\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f, s := set{}, set{}, set{}
			_ = eachLine(log, false, func(line string) error {
				if m := goPass.FindStringSubmatch(line); m != nil {
					if !f[m[1]] {
						delete(s, m[1])
						p[m[1]] = true
					}
				}
				for _, re := range goFail {
					if m := re.FindStringSubmatch(line); m != nil {
						delete(p, m[1])
						delete(s, m[1])
						f[m[1]] = true
					}
				}
				// Upstream adds a skipped test only when it already
				// failed (and did not pass): kept as it is.
				if m := goSkip.FindStringSubmatch(line); m != nil && !p[m[1]] && f[m[1]] {
					s[m[1]] = true
				}
				return nil
			})
			return result(p, f, s)
		}})

	// rust/tokio_rs/bytes.py: cargo test (libtest's lines).
	rsPass, rsFail, rsSkip := pyRe(`^test (\S+) ... ok`), pyRe(`^test (\S+) ... FAILED`), pyRe(`^test (\S+) ... ignored`)
	registerMultiSWE(&MultiSWEClass{Org: "tokio-rs", Repo: "bytes", Language: "rust",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply /home/test.patch /home/fix.patch\ncargo test\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f, s := set{}, set{}, set{}
			_ = eachLine(log, false, func(line string) error {
				for _, c := range []struct {
					re  *regexp.Regexp
					dst set
				}{{rsPass, p}, {rsFail, f}, {rsSkip, s}} {
					if m := c.re.FindStringSubmatch(line); m != nil {
						c.dst[m[1]] = true
					}
				}
				return nil
			})
			return result(p, f, s)
		}})

	// c/jqlang/jq.py: automake's make check.
	amPass, amFail, amSkip := pyRe(`^PASS: (\S+)$`), pyRe(`^FAIL: (\S+)$`), pyRe(`^SKIP: (\S+)$`)
	registerMultiSWE(&MultiSWEClass{Org: "jqlang", Repo: "jq", Language: "c",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply --whitespace=nowarn /home/test.patch /home/fix.patch\nautoreconf -i\n./configure --with-oniguruma=builtin\nmake clean                     \nmake -j8\nmake check\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f, s := set{}, set{}, set{}
			_ = eachLine(log, true, func(line string) error {
				for _, c := range []struct {
					re  *regexp.Regexp
					dst set
				}{{amPass, p}, {amFail, f}, {amSkip, s}} {
					if m := c.re.FindStringSubmatch(line); m != nil {
						c.dst[m[1]] = true
					}
				}
				return nil
			})
			return result(p, f, s)
		}})

	// cpp/fmtlib/fmt.py: ctest.
	ctPass := pyRe(`^\d+/\d+\s*Test\s*#\d+:\s*(.*?)\s*\.+\s*Passed`)
	ctFail := pyRe(`^\d+/\d+\s*Test\s*#\d+:\s*(.*?)\s*\.+\s*\*+Failed$`)
	registerMultiSWE(&MultiSWEClass{Org: "fmtlib", Repo: "fmt", Language: "cpp",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply --whitespace=nowarn /home/test.patch /home/fix.patch\ncd build\ncmake ..  \ncmake --build .\nctest\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f := set{}, set{}
			_ = eachLine(log, true, func(line string) error {
				if m := ctPass.FindStringSubmatch(line); m != nil {
					p[m[1]] = true
				}
				if m := ctFail.FindStringSubmatch(line); m != nil {
					f[m[1]] = true
				}
				return nil
			})
			return result(p, f, set{})
		}})

	// typescript/vuejs/core.py: vitest's verbose reporter.
	vtPass := pyRe(`^✓ (.+?)(?:\s*\d*\.?\d+\s*(?:ms|s|m))?$`)
	vtFail := pyRe(`^× (.+?)(?:\s*\d*\.?\d+\s*(?:ms|s|m))?$`)
	registerMultiSWE(&MultiSWEClass{Org: "vuejs", Repo: "core", Language: "typescript",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply /home/test.patch /home/fix.patch\npnpm run test-unit --no-watch --reporter=verbose\n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f := set{}, set{}
			_ = eachLine(log, true, func(line string) error {
				if m := vtPass.FindStringSubmatch(line); m != nil {
					p[m[1]] = true
				}
				if m := vtFail.FindStringSubmatch(line); m != nil {
					f[m[1]] = true
				}
				return nil
			})
			return result(p, f, set{})
		}})

	// javascript/iamkun/dayjs.py: jest --verbose, tests named
	// "<suite>:<test>"; a test line before any suite line raises.
	jsPassSuite, jsPassTest := pyRe(`^PASS (.+?)(?:\s\(\d*\.?\d+\s*\w+\))?$`), pyRe(`^✓ (.+?)(?:\s\(\d*\.?\d+\s*\w+\))?$`)
	jsFailSuite, jsFailTest := pyRe(`^FAIL (.+?)(?:\s\(\d*\.?\d+\s*\w+\))?$`), pyRe(`^✕ (.+?)(?:\s\(\d*\.?\d+\s*\w+\))?$`)
	registerMultiSWE(&MultiSWEClass{Org: "iamkun", Repo: "dayjs", Language: "javascript",
		FixRun: "#!/bin/bash\nset -e\n\ncd /home/{pr.repo}\ngit apply --whitespace=nowarn /home/test.patch /home/fix.patch\nnpm test -- --verbose && codecov \n\n",
		Parse: func(log string) (MultiSWEResult, error) {
			p, f := set{}, set{}
			suite, haveSuite := "", false
			err := eachLine(log, true, func(line string) error {
				if m := jsPassSuite.FindStringSubmatch(line); m != nil {
					suite, haveSuite = m[1], true
					p[suite] = true
				}
				if m := jsFailSuite.FindStringSubmatch(line); m != nil {
					suite, haveSuite = m[1], true
					f[suite] = true
				}
				if m := jsPassTest.FindStringSubmatch(line); m != nil {
					if !haveSuite {
						return fmt.Errorf("test passed without suite: %s", line)
					}
					p[suite+":"+m[1]] = true
				}
				if m := jsFailTest.FindStringSubmatch(line); m != nil {
					if !haveSuite {
						return fmt.Errorf("test failed without suite: %s", line)
					}
					f[suite+":"+m[1]] = true
				}
				return nil
			})
			if err != nil {
				return MultiSWEResult{}, err
			}
			return result(p, f, set{})
		}})
}
