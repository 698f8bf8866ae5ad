package spec

import (
	"regexp"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

// Automattic/wp-calypso is in the official v4.1.0 tables
// (SPECS_CALYPSO, MAP_REPO_TO_PARSER_JS) but its test commands are not: the
// JavaScript eval script derives them from the test patch's paths
// (get_test_cmds_calypso). Its parser is calypso.

const calypsoRepo = "Automattic/wp-calypso"

// calypsoVersions are SPECS_CALYPSO's versions (Node.js releases).
var calypsoVersions = map[string]bool{}

func init() {
	for _, v := range strings.Fields(`0.8 4.2.3 4.3.0 5.10.1 5.11.1 6.1.0 6.7.0 6.9.0 6.9.1 6.9.4 6.10.0
		6.10.2 6.10.3 6.11.1 6.11.2 6.11.5 8.9.1 8.9.3 8.9.4 8.11.0 8.11.2 10.4.1 10.5.0 10.6.0 10.9.0
		10.10.0 10.12.0 10.13.0 10.14.0 10.15.2 10.16.3`) {
		calypsoVersions[v] = true
	}
}

var (
	calypsoJestJS   = map[string]bool{"10.10.0": true, "10.12.0": true, "10.13.0": true, "10.14.0": true, "10.15.2": true, "10.16.3": true}
	calypsoJestJSON = map[string]bool{"6.11.5": true, "8.9.1": true, "8.9.3": true, "8.9.4": true, "8.11.0": true, "8.11.2": true,
		"10.4.1": true, "10.5.0": true, "10.6.0": true, "10.9.0": true}
	calypsoSnapshot = regexp.MustCompile(`__snapshots__/(.*).js.snap$`)
)

// calypsoTestCmds is get_test_cmds_calypso: for each file of the test
// patch, a snapshot stands for its test directory two levels up; a path
// under client/ or packages/ runs Jest with that package's config (.js or
// .json by version) or, for the oldest versions, "npm run test-<pkg>"; a
// path under test/e2e runs the end-to-end suite from its directory. Other
// paths run nothing. Paths are single-quoted as upstream writes them.
func calypsoTestCmds(inst dataset.Instance) []string {
	var cmds []string
	for _, path := range patchPaths(inst.TestPatch) {
		if calypsoSnapshot.MatchString(path) {
			parts := strings.Split(path, "/")
			if len(parts) >= 2 {
				path = strings.Join(parts[:len(parts)-2], "/")
			} else {
				path = ""
			}
		}
		switch {
		case strings.HasPrefix(path, "client"), strings.HasPrefix(path, "packages"):
			pkg, _, _ := strings.Cut(path, "/")
			switch {
			case calypsoJestJS[inst.Version]:
				cmds = append(cmds, "./node_modules/.bin/jest --verbose -c=test/"+pkg+"/jest.config.js '"+path+"'")
			case calypsoJestJSON[inst.Version]:
				cmds = append(cmds, "./node_modules/.bin/jest --verbose -c=test/"+pkg+"/jest.config.json '"+path+"'")
			default:
				cmds = append(cmds, "npm run test-"+pkg+" --verbose '"+path+"'")
			}
		case strings.HasPrefix(path, "test/e2e"):
			cmds = append(cmds, "cd test/e2e", "NODE_CONFIG_ENV=test npm run test "+path, "cd ../..")
		}
	}
	return cmds
}

// patchPaths is [x.path for x in unidiff.PatchSet(patch)]: each file's
// source name, or its target name when the source is /dev/null or the file
// is renamed, without a leading "a/" or "b/".
func patchPaths(patch string) []string {
	var out []string
	var source, target string
	inFile, rename := false, false
	flush := func() {
		if !inFile {
			return
		}
		path := source
		if path == "" || path == "/dev/null" || (rename && target != "" && target != "/dev/null") {
			path = target
		}
		if strings.HasPrefix(path, "a/") || strings.HasPrefix(path, "b/") {
			path = path[2:]
		}
		out = append(out, path)
	}
	header := true
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			inFile, rename, header = true, false, true
			source = gitHeaderSource(line)
			target = "b/" + strings.TrimPrefix(strings.TrimPrefix(line, "diff --git "+source), " b/")
		case !inFile || !header:
		case strings.HasPrefix(line, "new file mode "):
			source = "/dev/null"
		case strings.HasPrefix(line, "deleted file mode "):
			target = "/dev/null"
		case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "rename to "):
			rename = true
		case strings.HasPrefix(line, "--- "):
			source = fileName(line[len("--- "):])
		case strings.HasPrefix(line, "+++ "):
			target = fileName(line[len("+++ "):])
		case strings.HasPrefix(line, "@@ "):
			header = false
		}
	}
	flush()
	return out
}

// fileName drops the timestamp unidiff ignores after a tab.
func fileName(name string) string {
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		return name[:i]
	}
	return name
}
