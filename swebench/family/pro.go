package family

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-bench Pro (Scale AI): rows with lowercase fail_to_pass and
// pass_to_pass (Python list literals), before_repo_set_cmd and
// selected_test_files_to_run; images jefzda/sweap-images:<tag> with the
// repository at /app; each instance's run_script.sh and parser.py, and
// the ENV lines of its two Dockerfiles, from a checkout of
// scaleapi/SWE-bench_Pro-os given with spec.WithFamilyFiles. The eval
// script is swe_bench_pro_eval.py's create_entryscript, byte for byte,
// with its /workspace under /tmp (the root file system is read-only): it
// applies the model patch itself (git apply -v, the tests run whatever it
// exits), so the row's procedure ([ProProcedure]) has the evaluator stage
// the patch in /app and apply nothing; parser.py runs in the sandbox and
// its output.json is printed between the markers, which GradingPro
// reads.
func init() {
	grade.RegisterRule(GradingPro, gradePro)
	Register(&Family{
		Name:     "swe-bench-pro",
		Aliases:  []string{"pro"},
		Title:    "SWE-bench Pro",
		Datasets: []Dataset{{ID: "ScaleAI/SWE-bench_Pro", Splits: []string{"test"}}},
		Upstream: Upstream{Repository: "scaleapi/SWE-bench_Pro-os", Commit: ProCommit},
		// The harness's --dockerhub_username of the published images.
		Namespace: "jefzda",
		Claim: func(inst dataset.Instance) Claim {
			if _, ok := inst.Extra["before_repo_set_cmd"]; ok {
				return ClaimRow
			}
			return ClaimNone
		},
		Image:     ProImage,
		Spec:      proSpec,
		Grading:   GradingPro,
		Container: Container{Workdir: ProRepoDir},
	})
}

// ProCommit is the commit of scaleapi/SWE-bench_Pro-os whose harness the
// family reproduces (main, 2026-05-18).
const ProCommit = "ca10a60a5fcae51e6948ffe1485d4153d421e6c5"

const (
	// ProRepoDir is where Pro's images hold the repository.
	ProRepoDir = "/app"
	// ProWorkspace stands for the harness's /workspace, which it mounts
	// into the container: swebox's root file system is read-only, /tmp
	// is writable.
	ProWorkspace = "/tmp/sweap-workspace"
	// ProPatchFile is where the eval script reads the model patch: the
	// evaluator stages it in the repository's .git directory
	// (spec.Procedure.ScriptAppliesPatch).
	ProPatchFile = ProRepoDir + "/.git/swebox/patch.diff"
)

// ProProcedure is how Pro's harness runs a row: in /app, the entry script
// applying the model patch (a patch that does not apply leaves the tests
// to run on the base commit and grade it, as swe_bench_pro_eval.py does).
var ProProcedure = spec.Procedure{Workdir: ProRepoDir, ScriptAppliesPatch: true}

// ErrProRow is a Pro row, or the files beside it, that its harness cannot
// run (swe_bench_pro_eval.py raises, and counts the instance unresolved).
var ErrProRow = errors.New("the SWE-bench Pro row cannot be run as its harness runs it")

// ErrNoProCheckout: a Pro row was given without a SWE-bench_Pro-os
// checkout (spec.WithFamilyFiles; swebench.Config.ProCheckout, eval
// --pro_checkout), whose run_scripts/ and dockerfiles/ its harness reads.
var ErrNoProCheckout = errors.New("no SWE-bench_Pro-os checkout given (its run_scripts/ and dockerfiles/)")

// proID splits an instance id, instance_<org>__<repo>-<commit>[-v<hash>].
var proID = regexp.MustCompile(`^instance_(.+?)__(.+?)-[0-9a-f]{40}(?:-|$)`)

// ProImage is helper_code/image_uri.py's get_dockerhub_image_uri, with the
// repository read from the instance id (which Pro builds from it):
// <namespace>/sweap-images:<org>.<repo>-<id without instance_ and -vnan>,
// element-web's repository spelled "element" but for one instance, the tag
// cut at 128 characters. tag is unused: Pro's tag names the instance.
func ProImage(instanceID, namespace, _ string) string {
	m := proID.FindStringSubmatch(instanceID)
	if m == nil {
		return ""
	}
	base, name := strings.ToLower(m[1]), strings.ToLower(m[2])
	hsh := strings.Replace(instanceID, "instance_", "", -1)
	switch {
	case instanceID == "instance_element-hq__element-web-ec0f940ef0e8e3b61078f145f34dc40d1938e6c5-vnan":
		name = "element-web"
	case strings.Contains(base+"/"+name, "element-hq") && strings.Contains(base+"/"+name, "element-web"):
		name = "element"
		hsh = strings.TrimSuffix(hsh, "-vnan")
	default:
		hsh = strings.TrimSuffix(hsh, "-vnan")
	}
	tag := base + "." + name + "-" + hsh
	if len(tag) > 128 {
		tag = tag[:128]
	}
	if namespace == "" {
		return "sweap-images:" + tag
	}
	return namespace + "/sweap-images:" + tag
}

// ProFileError is a file of an instance that the SWE-bench_Pro-os
// checkout lacks: Pro's harness reads it for the instance (its
// load_local_script raises FileNotFoundError), so the row cannot be run
// as the harness runs it. It wraps [ErrProRow].
type ProFileError struct {
	InstanceID string
	// Path is the file's path in the checkout, e.g.
	// run_scripts/<id>/run_script.sh.
	Path string
	Err  error
}

func (e *ProFileError) Error() string {
	return fmt.Sprintf("%s: the SWE-bench_Pro-os checkout has no %s (scaleapi/SWE-bench_Pro-os at %s has one for every public instance): %v",
		e.InstanceID, e.Path, ProCommit[:7], e.Err)
}

func (e *ProFileError) Unwrap() []error { return []error{ErrProRow, e.Err} }

// ProFiles are the harness's files for one instance.
type ProFiles struct {
	RunScript, Parser                  string
	BaseDockerfile, InstanceDockerfile string
}

// LoadProFiles reads an instance's files from a SWE-bench_Pro-os checkout;
// a file it lacks is a *[ProFileError].
func LoadProFiles(fsys fs.FS, instanceID string) (ProFiles, error) {
	var f ProFiles
	for _, x := range []struct {
		dst  *string
		name string
	}{
		{&f.RunScript, path.Join("run_scripts", instanceID, "run_script.sh")},
		{&f.Parser, path.Join("run_scripts", instanceID, "parser.py")},
		{&f.BaseDockerfile, path.Join("dockerfiles/base_dockerfile", instanceID, "Dockerfile")},
		{&f.InstanceDockerfile, path.Join("dockerfiles/instance_dockerfile", instanceID, "Dockerfile")},
	} {
		b, err := fs.ReadFile(fsys, x.name)
		if err != nil {
			return f, &ProFileError{InstanceID: instanceID, Path: x.name, Err: err}
		}
		*x.dst = string(b)
	}
	return f, nil
}

// ProEntryScript is create_entryscript: the Dockerfiles' ENV lines as
// exports, the repository reset to base_commit, the patch applied, the
// last line of before_repo_set_cmd, run_script.sh on the selected test
// files joined with commas, then parser.py. workspace stands for
// /workspace.
func ProEntryScript(inst dataset.Instance, files ProFiles, workspace string) (string, error) {
	before, err := proString(inst, "before_repo_set_cmd")
	if err != nil {
		return "", err
	}
	lines := strings.Split(pyStrip(before), "\n")
	before = lines[len(lines)-1]
	selected, err := proList(inst, "selected_test_files_to_run")
	if err != nil {
		return "", err
	}
	var env []string
	for _, df := range []string{files.BaseDockerfile, files.InstanceDockerfile} {
		for _, line := range strings.Split(df, "\n") {
			line = pyStrip(line)
			if strings.HasPrefix(line, "ENV") {
				env = append(env, strings.Replace(line, "ENV", "export", 1))
			}
		}
	}
	ws := workspace
	return "\n" + strings.Join(env, "\n") + `
# apply patch
cd /app
git reset --hard ` + inst.BaseCommit + `
git checkout ` + inst.BaseCommit + `
git apply -v ` + ws + `/patch.diff
` + before + `
# run test and save stdout and stderr to separate files
bash ` + ws + `/run_script.sh ` + strings.Join(selected, ",") + ` > ` + ws + `/stdout.log 2> ` + ws + `/stderr.log
# run parsing script
python ` + ws + `/parser.py ` + ws + `/stdout.log ` + ws + `/stderr.log ` + ws + `/output.json
`, nil
}

// proStripBinary is strip_binary_hunks, run in the sandbox on the staged
// patch: sections of a git diff that are binary are left out.
const proStripBinary = `import re, sys
patch = open(sys.argv[1]).read()
kept = []
for section in re.split(r'(?=^diff --git )', patch, flags=re.MULTILINE):
    if not section.strip():
        continue
    if re.search(r'^Binary files .* differ$', section, re.MULTILINE):
        continue
    if re.search(r'^GIT binary patch$', section, re.MULTILINE):
        continue
    kept.append(section)
open(sys.argv[2], 'w').write(''.join(kept) if patch else patch)
`

// proSpec writes the workspace files, runs the entry script and prints
// output.json between the markers, then the test logs for people.
func proSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	fsys := spec.FamilyFiles(opts...)
	if fsys == nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: %w", inst.InstanceID, ErrProRow, ErrNoProCheckout)
	}
	files, err := LoadProFiles(fsys, inst.InstanceID)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	entry, err := ProEntryScript(inst, files, ProWorkspace)
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	f2p, err := proList(inst, "fail_to_pass")
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	p2p, err := proList(inst, "pass_to_pass")
	if err != nil {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w", inst.InstanceID, err)
	}
	heredoc := func(name, content string) (string, error) {
		for _, l := range strings.Split(content, "\n") {
			if l == spec.HeredocDelimiter {
				return "", fmt.Errorf("spec for %s: %w: %s holds the heredoc delimiter", inst.InstanceID, ErrProRow, name)
			}
		}
		// A heredoc ends its text with a newline; head -c -1 keeps it
		// exact.
		tmp, dst := ProWorkspace+"/"+name+".tmp", ProWorkspace+"/"+name
		return "cat > " + tmp + " <<'" + spec.HeredocDelimiter + "' || pro_setup_failed\n" + content + "\n" + spec.HeredocDelimiter +
			"\n{ head -c -1 " + tmp + " > " + dst + " && rm " + tmp + "; } || pro_setup_failed", nil
	}
	// The harness writes the workspace from the host; here the script
	// does, before anything of the patch's runs, so that a step of it
	// that fails is the infrastructure's (GradingPro: an error), not the
	// model's.
	lines := []string{
		"pro_setup_failed() { echo '" + ProSetupFailed + "'; exit 3; }",
		"mkdir -p " + ProWorkspace + " || pro_setup_failed",
	}
	for _, x := range [][2]string{{"run_script.sh", files.RunScript}, {"parser.py", files.Parser}, {"entryscript.sh", entry}, {"strip_binary.py", proStripBinary}} {
		h, err := heredoc(x[0], x[1])
		if err != nil {
			return spec.TestSpec{}, err
		}
		lines = append(lines, h)
	}
	lines = append(lines,
		"python "+ProWorkspace+"/strip_binary.py "+ProPatchFile+" "+ProWorkspace+"/patch.diff || pro_setup_failed",
		// Pro's harness records nothing of the patch's application; the
		// check, which changes nothing, tells report.json's
		// patch_successfully_applied.
		"git -C "+ProRepoDir+" apply --check "+ProWorkspace+"/patch.diff > /dev/null 2>&1 || echo '"+ProPatchNotApplied+"'",
		"bash "+ProWorkspace+"/entryscript.sh",
		"echo '"+harness.StartTestOutput+"'",
		"cat "+ProWorkspace+"/output.json",
		"echo '"+harness.EndTestOutput+"'",
		// For people: what run_script.sh printed, which the harness keeps
		// beside output.json; after the markers, where grading never
		// looks.
		"echo '--- run_script.sh stdout.log'", "cat "+ProWorkspace+"/stdout.log",
		"echo '--- run_script.sh stderr.log'", "cat "+ProWorkspace+"/stderr.log",
	)
	row := inst
	row.EvalScript = strings.Join(lines, "\n") + "\n"
	row.EvalType = dataset.EvalTypePassAndFail
	row.LogParser = harness.ParserPytest // unused: GradingPro reads output.json
	ts, err := spec.For(row, opts...)
	if err != nil {
		return ts, err
	}
	ts.Grading = GradingPro
	ts.Run = ProProcedure
	if f2p == nil {
		f2p = []string{}
	}
	if p2p == nil {
		p2p = []string{}
	}
	ts.FailToPass, ts.PassToPass = f2p, p2p
	return ts, nil
}

// proString reads a string field of the row (pandas' fillna("") makes a
// missing or null one empty).
func proString(inst dataset.Instance, field string) (string, error) {
	raw, ok := inst.Extra[field]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s is %s, not a string", ErrProRow, field, dataset.JSONKind(raw))
	}
	return s, nil
}

// proList reads a list field: Pro's rows hold a Python list literal in a
// string, which its harness eval()s; a JSON list is taken as well.
func proList(inst dataset.Instance, field string) ([]string, error) {
	raw := inst.Extra[field]
	var list []string
	if len(raw) > 0 && json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	s, err := proString(inst, field)
	if err != nil {
		return nil, err
	}
	list, err = PyStringList(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrProRow, field, err)
	}
	return list, nil
}

// pyStrip is Python's str.strip() for the ASCII whitespace it removes.
func pyStrip(s string) string { return strings.Trim(s, " \t\n\r\x0b\x0c") }

// PyStringList parses a Python list literal of string literals, what
// eval() of Pro's fail_to_pass gives: '...' or "..." items with Python's
// escapes, a trailing comma allowed.
func PyStringList(s string) ([]string, error) {
	s = pyStrip(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("not a list literal: %.40q", s)
	}
	body := s[1 : len(s)-1]
	out := []string{}
	i := 0
	skip := func() {
		for i < len(body) && strings.ContainsRune(" \t\n\r", rune(body[i])) {
			i++
		}
	}
	for {
		skip()
		if i >= len(body) {
			return out, nil
		}
		q := body[i]
		if q != '\'' && q != '"' {
			return nil, fmt.Errorf("item at %d is not a string literal", i)
		}
		i++
		var b strings.Builder
		for {
			if i >= len(body) {
				return nil, errors.New("unterminated string literal")
			}
			c := body[i]
			if c == q {
				i++
				break
			}
			if c != '\\' {
				b.WriteByte(c)
				i++
				continue
			}
			if i+1 >= len(body) {
				return nil, errors.New("unterminated escape")
			}
			e := body[i+1]
			i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n > len(body) {
					return nil, errors.New("short escape")
				}
				v, err := strconv.ParseUint(body[i:i+n], 16, 32)
				if err != nil {
					return nil, fmt.Errorf("bad escape: %w", err)
				}
				b.WriteRune(rune(v))
				i += n
			case '\n':
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		}
		out = append(out, b.String())
		skip()
		if i >= len(body) {
			return out, nil
		}
		if body[i] != ',' {
			return nil, fmt.Errorf("want a comma at %d", i)
		}
		i++
	}
}

// GradingPro is SWE-bench Pro's rule (scaleapi/SWE-bench_Pro-os,
// swe_bench_pro_eval.py): the per-instance parser.py writes output.json,
// a list of tests with statuses; resolved when every fail_to_pass and
// pass_to_pass test is among those PASSED. No output.json is unresolved.
const GradingPro harness.Grading = "swe-bench-pro"

// ReasonNoOutputJSON (SWE-bench Pro): the text between the markers is not
// the output.json that the instance's parser.py writes ({"tests": [...]}):
// the parser did not run or failed, and Pro's harness counts the instance
// unresolved.
const ReasonNoOutputJSON grade.Reason = "no_output_json"

// ProSetupFailed is the line the eval script prints, before it exits
// without the markers, when it could not write Pro's workspace (the harness's /workspace) or strip
// the patch: nothing of the patch's has run, and GradingPro reports an
// infrastructure error ([ErrProSetup]), never a verdict.
const ProSetupFailed = ">>>>> swebox: the SWE-bench Pro workspace could not be set up"

// ProPatchNotApplied is the line the eval script prints, before the
// entry script, when git apply --check says the entry script's git apply
// will not apply the patch. Pro grades such a run by its tests as any
// other; report.json says patch_successfully_applied false.
const ProPatchNotApplied = ">>>>> swebox: git apply --check: the patch does not apply"

// ErrProSetup: the eval script could not set up Pro's workspace in the
// sandbox (ProSetupFailed), an infrastructure failure.
var ErrProSetup = errors.New("SWE-bench Pro's workspace could not be set up in the sandbox")

// ProOutput is the output.json of a SWE-bench Pro instance's parser.py.
type ProOutput struct {
	Tests []ProTest `json:"tests"`
}

// ProTest is one test of a [ProOutput]; Status is PASSED, FAILED, SKIPPED
// or ERROR.
type ProTest struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ProTests is swe_bench_pro_eval.py's rule (scaleapi/SWE-bench_Pro-os at
// ca10a60, main): passed is the set of names with a PASSED entry (a name
// listed twice passes if either entry passed), and the instance is
// resolved when fail_to_pass ∪ pass_to_pass ⊆ passed; empty lists
// resolve.
func ProTests(out ProOutput, failToPass, passToPass []string) (grade.TestsStatus, bool) {
	passed := map[string]bool{}
	for _, t := range out.Tests {
		if t.Status == "PASSED" {
			passed[t.Name] = true
		}
	}
	ts := grade.NewTestsStatus()
	resolved := true
	for _, l := range []struct {
		names []string
		into  *grade.Results
	}{{failToPass, &ts.FailToPass}, {passToPass, &ts.PassToPass}} {
		for _, n := range l.names {
			if passed[n] {
				l.into.Success = append(l.into.Success, n)
			} else {
				l.into.Failure = append(l.into.Failure, n)
				resolved = false
			}
		}
	}
	return ts, resolved
}

// gradePro is Grade under SWE-bench Pro's rule: the eval script prints the
// parser's output.json between the markers; anything else there (no
// markers, the parser failed, not JSON) is Pro's "output.json not found",
// unresolved.
func gradePro(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, in.Rules.OrDefault(), GradingPro)
	if done {
		return rep, nil
	}
	text := grade.UniversalNewlines(in.Log)
	before, _, started := strings.Cut(text, harness.StartTestOutput)
	if !started && slices.Contains(strings.Split(text, "\n"), ProSetupFailed) {
		return rep, fmt.Errorf("%s: %w", in.InstanceID, ErrProSetup)
	}
	if !strings.Contains(text, harness.StartTestOutput) || !strings.Contains(text, harness.EndTestOutput) {
		rep.Evaluation.Reason = grade.ReasonMissingMarkers
		return rep, nil
	}
	// After the start marker's line (bash's trace of its echo, set -x,
	// holds the marker too): the trace of the cat, then output.json.
	_, chunk, ok := strings.Cut(text, "\n"+harness.StartTestOutput+"\n")
	if !ok {
		chunk = grade.TestChunk(text)
	}
	for strings.HasPrefix(chunk, "+") {
		_, chunk, _ = strings.Cut(chunk, "\n")
	}
	var out ProOutput
	dec := json.NewDecoder(strings.NewReader(chunk))
	if err := dec.Decode(&out); err != nil || out.Tests == nil {
		rep.Evaluation.Reason = ReasonNoOutputJSON
		return rep, nil
	}
	rep.Evaluation.Usable = true
	rep.PatchSuccessfullyApplied = !slices.Contains(strings.Split(before, "\n"), ProPatchNotApplied)
	rep.StatusMap = logparse.StatusMap{}
	for _, t := range out.Tests {
		if rep.StatusMap[t.Name] != logparse.PASSED {
			rep.StatusMap[t.Name] = logparse.Status(t.Status)
		}
	}
	ts, resolved := ProTests(out, in.FailToPass, in.PassToPass)
	rep.TestsStatus, rep.Resolved = &ts, resolved
	return rep, nil
}
