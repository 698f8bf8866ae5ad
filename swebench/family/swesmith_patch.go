package family

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// hunkHeader is a unified diff hunk header: @@ -a[,b] +c[,d] @@ rest.
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$`)

// ReversePatch is the patch that undoes p, as `git apply --reverse p`
// applies it: for each file the old and new names, modes and blob ids
// swap, new files become deletions and the reverse, and in each hunk the
// ranges swap and each run of removed-then-added lines becomes the added
// lines removed, then the removed lines added (as `git diff -R` writes
// it). Binary patches and copies have no reverse here and are an error.
func ReversePatch(p string) (string, error) {
	lines := strings.SplitAfter(p, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		body := strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(body, "diff --git "):
			a, b, ok := splitGitNames(strings.TrimPrefix(body, "diff --git "))
			if !ok {
				return "", fmt.Errorf("line %d: cannot read the names of %q", i+1, body)
			}
			out.WriteString("diff --git a/" + b + " b/" + a + eol(line))
		case strings.HasPrefix(body, "GIT binary patch"), strings.HasPrefix(body, "Binary files "):
			return "", fmt.Errorf("line %d: a binary patch has no reverse here", i+1)
		case strings.HasPrefix(body, "copy from "), strings.HasPrefix(body, "copy to "):
			return "", fmt.Errorf("line %d: a copy has no reverse here", i+1)
		case strings.HasPrefix(body, "new file mode "):
			out.WriteString("deleted file mode " + strings.TrimPrefix(body, "new file mode ") + eol(line))
		case strings.HasPrefix(body, "deleted file mode "):
			out.WriteString("new file mode " + strings.TrimPrefix(body, "deleted file mode ") + eol(line))
		case strings.HasPrefix(body, "old mode ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "new mode "):
			next := strings.TrimRight(lines[i+1], "\n")
			out.WriteString("old mode " + strings.TrimPrefix(next, "new mode ") + eol(line))
			out.WriteString("new mode " + strings.TrimPrefix(body, "old mode ") + eol(lines[i+1]))
			i++
		case strings.HasPrefix(body, "rename from ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "rename to "):
			next := strings.TrimRight(lines[i+1], "\n")
			out.WriteString("rename from " + strings.TrimPrefix(next, "rename to ") + eol(line))
			out.WriteString("rename to " + strings.TrimPrefix(body, "rename from ") + eol(lines[i+1]))
			i++
		case strings.HasPrefix(body, "index "):
			f := strings.Fields(strings.TrimPrefix(body, "index "))
			from, to, ok := strings.Cut(f[0], "..")
			if !ok {
				return "", fmt.Errorf("line %d: cannot read %q", i+1, body)
			}
			out.WriteString("index " + strings.Join(append([]string{to + ".." + from}, f[1:]...), " ") + eol(line))
		case strings.HasPrefix(body, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			oldName := diffName(strings.TrimPrefix(body, "--- "))
			newName := diffName(strings.TrimPrefix(strings.TrimRight(lines[i+1], "\n"), "+++ "))
			out.WriteString("--- " + swapSide(newName, "a/") + eol(line))
			out.WriteString("+++ " + swapSide(oldName, "b/") + eol(lines[i+1]))
			i++
		case strings.HasPrefix(body, "@@ "):
			n, err := reverseHunk(lines[i:], &out)
			if err != nil {
				return "", fmt.Errorf("line %d: %w", i+1, err)
			}
			i += n - 1
		default:
			out.WriteString(line)
		}
	}
	return out.String(), nil
}

// reverseHunk writes the reverse of the hunk starting at lines[0] and
// returns how many lines it took.
func reverseHunk(lines []string, out *strings.Builder) (int, error) {
	header := strings.TrimRight(lines[0], "\n")
	m := hunkHeader.FindStringSubmatch(header)
	if m == nil {
		return 0, fmt.Errorf("cannot read hunk header %q", header)
	}
	count := func(s string) int {
		if s == "" {
			return 1
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	oldLeft, newLeft := count(m[2]), count(m[4])
	rng := func(start, n string) string {
		if n == "" {
			return start
		}
		return start + "," + n
	}
	out.WriteString("@@ -" + rng(m[3], m[4]) + " +" + rng(m[1], m[2]) + " @@" + m[5] + eol(lines[0]))
	// A run of changes: the removed lines and the added lines, each with
	// the "\ No newline at end of file" line that follows it.
	var removed, added []string
	flush := func() {
		for _, l := range added {
			out.WriteString(flipSign(l, '-'))
		}
		for _, l := range removed {
			out.WriteString(flipSign(l, '+'))
		}
		removed, added = nil, nil
	}
	n := 1
	var last *[]string
	for ; n < len(lines) && (oldLeft > 0 || newLeft > 0 || strings.HasPrefix(lines[n], `\`)); n++ {
		l := lines[n]
		switch {
		case strings.HasPrefix(l, `\`):
			if last != nil {
				(*last)[len(*last)-1] += l
			} else {
				out.WriteString(l)
			}
		case strings.HasPrefix(l, "-"):
			removed = append(removed, l)
			last = &removed
			oldLeft--
		case strings.HasPrefix(l, "+"):
			added = append(added, l)
			last = &added
			newLeft--
		case strings.HasPrefix(l, " "), l == "\n":
			flush()
			out.WriteString(l)
			last = nil
			oldLeft--
			newLeft--
		default:
			return 0, fmt.Errorf("hunk ends early at %q", strings.TrimRight(l, "\n"))
		}
	}
	flush()
	if oldLeft != 0 || newLeft != 0 {
		return 0, fmt.Errorf("hunk %q is short of lines", header)
	}
	return n, nil
}

// flipSign gives the first line of l (a diff line and maybe its "\ No
// newline" line) the sign c.
func flipSign(l string, c byte) string { return string(c) + l[1:] }

func eol(line string) string {
	if strings.HasSuffix(line, "\n") {
		return "\n"
	}
	return ""
}

// diffName is the name of a ---/+++ line, without a tab-separated
// timestamp.
func diffName(s string) string {
	name, _, _ := strings.Cut(s, "\t")
	return name
}

// swapSide writes a name of the other side under prefix: /dev/null
// stays, "a/x" or "b/x" becomes prefix+"x".
func swapSide(name, prefix string) string {
	if name == "/dev/null" {
		return name
	}
	if len(name) > 2 && (name[:2] == "a/" || name[:2] == "b/") {
		return prefix + name[2:]
	}
	return name
}

// splitGitNames reads "a/X b/Y" of a diff --git line whose names hold no
// quotes: X and Y, split at the " b/" that makes them equal when the
// names are the same, else at the last " b/".
func splitGitNames(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "a/") || strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	rest := s[2:]
	if half := (len(rest) - len(" b/")) / 2; half > 0 && len(rest) == 2*half+len(" b/") && rest[half:half+len(" b/")] == " b/" && rest[:half] == rest[half+len(" b/"):] {
		return rest[:half], rest[:half], true
	}
	i := strings.LastIndex(rest, " b/")
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+len(" b/"):], true
}
