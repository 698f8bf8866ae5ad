package family

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/grade"
	"github.com/swebox/swebox/swebench/harness"
	"github.com/swebox/swebox/swebench/logparse"
	"github.com/swebox/swebox/swebench/spec"
)

// SWE-Gym: SWE-bench-shaped training rows over eleven repositories the
// official tables do not know, run in images its authors published under
// xingyaoww, named as the official ones but with "__" written "_s_".
// Nothing in a row says it is SWE-Gym's, so a row is the family's only by
// the dataset's name or Config.Family; a row of one of its repositories
// alone only looks like one.
//
// Its harness is SWE-Gym/SWE-Bench-Fork, SWE-bench 2.0.13 with the
// family's tables (constants.py, read at 242429c): eval.sh in 2.0.13's
// style (ScriptSWEBench2: "set -xo pipefail", "git diff <base>",
// test files from the regex `--- a/(.*)`, no start or end marker), the
// test command the table's followed by the test patch's files (python/mypy:
// its [case X] names, quoted and joined by " or "), and 2.0.13's grading
// (GradingSWEGym: the whole log, usable where it says "applied
// patch"), with the parser its MAP_REPO_TO_PARSER gives the repository
// read from the instance id (parse_log_pytest, or for pydantic
// parse_log_pytest_pydantic).
func init() {
	grade.RegisterRule(GradingSWEGym, gradeSWEGym)
	spec.RegisterScriptStyle(ScriptSWEBench2, sweBench2Script)
	Register(&Family{
		Name:  "swe-gym",
		Title: "SWE-Gym",
		Datasets: []Dataset{
			{ID: "SWE-Gym/SWE-Gym", Splits: []string{"train"}},
			{ID: "SWE-Gym/SWE-Gym-Lite", Splits: []string{"train"}},
		},
		Upstream:  Upstream{Repository: "SWE-Gym/SWE-Bench-Fork", Commit: "242429c188fcfd06aad13fce9a54d450470bf0ac"},
		Namespace: "xingyaoww",
		Image:     SWEGymImage,
		Claim: func(inst dataset.Instance) Claim {
			if sweGymTables[strings.ToLower(inst.Repo)] != nil {
				return ClaimLooksLike
			}
			return ClaimNone
		},
		Spec:    sweGymSpec,
		Grading: GradingSWEGym,
		// 2.0.13's parsers are v4's.
		Rules: harness.V4,
	})
}

// SWEGymImage is the name of a SWE-Gym instance image:
// "{namespace}/sweb.eval.x86_64.{id}:{tag}" with "__" written "_s_" and
// the id lower-cased.
func SWEGymImage(instanceID, namespace, tag string) string {
	key := harness.LocalInstanceImage(strings.ReplaceAll(instanceID, "__", "_s_"), "x86_64", tag)
	if namespace == "" {
		return key
	}
	return namespace + "/" + key
}

// ErrTableNotPorted is a row of a repository whose family's spec table
// swebox does not carry: its test command is unknown, so the row is not
// run in a guessed one.
var ErrTableNotPorted = errors.New("the family's spec table for this repository is not ported")

// ErrNoParser is a row its family's harness would run but not grade: its
// parser table has no entry for the repository read from the instance id
// (the fork raises KeyError after the tests ran), so swebox refuses it
// before anything runs.
var ErrNoParser = errors.New("the family's harness has no log parser for this row")

var (
	// sweGymTestFiles is the fork's DIFF_MODIFIED_FILE_REGEX, matched
	// anywhere in the test patch.
	sweGymTestFiles = regexp.MustCompile(`--- a/(.*)`)
	// sweGymDirective is get_test_directives' pattern.
	sweGymDirective = regexp.MustCompile(`diff --git a/.* b/(.*)`)
	// sweGymMypyCase is make_test_command's pattern for mypy.
	sweGymMypyCase = regexp.MustCompile(`\[case ([^\]]+)\]`)
)

// sweGymNonTestExts is 2.0.13's NON_TEST_EXTS ("csv" without its dot, as
// upstream has it).
var sweGymNonTestExts = []string{".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml"}

// sweGymSpec is the fork's make_test_spec and make_eval_script_list.
func sweGymSpec(inst dataset.Instance, opts ...spec.Option) (spec.TestSpec, error) {
	repo := strings.ToLower(inst.Repo)
	table := sweGymTables[repo]
	if table == nil {
		return spec.For(inst, opts...)
	}
	vs, ok := sweGymVersion(table, inst.Version)
	if !ok {
		// MAP_REPO_VERSION_TO_SPECS[repo][version] raises KeyError.
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: %s %q is not in SWE-Gym/SWE-Bench-Fork's table", inst.InstanceID, spec.ErrUnknownVersion, inst.Repo, inst.Version)
	}
	parser, ok := sweGymParser(inst.InstanceID)
	if !ok {
		return spec.TestSpec{}, fmt.Errorf("spec for %s: %w: MAP_REPO_TO_PARSER has no %q", inst.InstanceID, ErrNoParser, sweGymLogRepo(inst.InstanceID))
	}
	ts, err := spec.For(inst, opts...)
	if err != nil {
		return ts, err
	}
	ts.Script = ScriptSWEBench2
	ts.Parser = parser
	ts.TestCmd, ts.Directives = vs.testCmd, sweGymDirectives(inst)
	if repo == "python/mypy" {
		var cases []string
		for _, m := range sweGymMypyCase.FindAllStringSubmatch(inst.TestPatch, -1) {
			cases = append(cases, m[1])
		}
		ts.TestCmd, ts.Directives = vs.testCmd+` "`+strings.Join(cases, " or ")+`"`, nil
	}
	ts.TestFiles = nil
	for _, m := range sweGymTestFiles.FindAllStringSubmatch(inst.TestPatch, -1) {
		ts.TestFiles = append(ts.TestFiles, m[1])
	}
	ts.Install, ts.Python = vs.install, vs.python
	ts.PreInstall = append([]string(nil), vs.preInstall...)
	ts.EvalCommands = append([]string(nil), vs.evalCommands...)
	ts.EvalType, ts.NanoCPUs = dataset.EvalTypePassAndFail, 0
	ts.Source = spec.SourceOfficial
	ts.Notes = append(ts.Notes[:0:0], "test command and install step from SWE-Gym/SWE-Bench-Fork's table; eval.sh in SWE-bench 2.0.13's style, graded as its fork grades (the whole log)")
	return ts, nil
}

// sweGymDirectives is 2.0.13's get_test_directives for the family's
// repositories (no humaneval, no Django).
func sweGymDirectives(inst dataset.Instance) []string {
	var out []string
	for _, m := range sweGymDirective.FindAllStringSubmatch(inst.TestPatch, -1) {
		d, test := m[1], true
		for _, ext := range sweGymNonTestExts {
			test = test && !strings.HasSuffix(d, ext)
		}
		if test {
			out = append(out, d)
		}
	}
	return out
}

// sweGymLogRepo is the repository 2.0.13's get_logs_eval reads from the
// log's directory, named by the lower-cased instance id:
// "-".join(id.replace("__", "/").split("-")[:-1]).
func sweGymLogRepo(instanceID string) string {
	parts := strings.Split(strings.ReplaceAll(strings.ToLower(instanceID), "__", "/"), "-")
	return strings.Join(parts[:len(parts)-1], "-")
}

// sweGymParser is the parser the fork's MAP_REPO_TO_PARSER (lower-cased
// keys) gives the row: the official ones for the official repositories,
// pytest for the family's but pydantic.
func sweGymParser(instanceID string) (string, bool) {
	repo := sweGymLogRepo(instanceID)
	switch {
	case repo == "pydantic/pydantic":
		return ParserPytestPydantic, true
	case repo == "mne-tools/mne-python" || sweGymTables[repo] != nil && repo != "spyder-ide/spyder":
		return harness.ParserPytest, true
	}
	for _, r := range sweGymOfficialParsed {
		if r == repo {
			return harness.ParserForRepo(r), true
		}
	}
	return "", false
}

// sweGymOfficialParsed are the official repositories of 2.0.13's
// MAP_REPO_TO_PARSER, whose parsers are v4's by the same names.
var sweGymOfficialParsed = []string{
	"astropy/astropy", "django/django", "marshmallow-code/marshmallow", "matplotlib/matplotlib",
	"mwaskom/seaborn", "pallets/flask", "psf/requests", "pvlib/pvlib-python", "pydata/xarray",
	"pydicom/pydicom", "pylint-dev/astroid", "pylint-dev/pylint", "pytest-dev/pytest", "pyvista/pyvista",
	"scikit-learn/scikit-learn", "sqlfluff/sqlfluff", "sphinx-doc/sphinx", "sympy/sympy",
}

// gymSpec is one entry of the fork's MAP_REPO_VERSION_TO_SPECS, for the
// versions it lists (space-separated), with the keys eval.sh and the
// image's environment read.
type gymSpec struct {
	versions                 string
	python, install, testCmd string
	preInstall, evalCommands []string
}

func sweGymVersion(table []gymSpec, version string) (gymSpec, bool) {
	for _, s := range table {
		for _, v := range strings.Fields(s.versions) {
			if v == version {
				return s, true
			}
		}
	}
	return gymSpec{}, false
}

// SWEGymSpecs lists the fork's table as swebox holds it, for tests that
// compare it with the fork's own: repository → version → the entry's
// test_cmd, install, python, pre_install and eval_commands.
func SWEGymSpecs() map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for repo, table := range sweGymTables {
		out[repo] = map[string]map[string]any{}
		for _, s := range table {
			for _, v := range strings.Fields(s.versions) {
				e := map[string]any{"test_cmd": s.testCmd, "install": nil, "python": nil, "pre_install": nil, "eval_commands": nil}
				if s.install != "" {
					e["install"] = s.install
				}
				if s.python != "" {
					e["python"] = s.python
				}
				if s.preInstall != nil {
					e["pre_install"] = s.preInstall
				}
				if s.evalCommands != nil {
					e["eval_commands"] = s.evalCommands
				}
				out[repo][v] = e
			}
		}
	}
	return out
}

// sweGymTables are the repositories SWE-Gym/SWE-Bench-Fork adds to
// MAP_REPO_VERSION_TO_SPECS (constants.py at 242429c, lines 1621-2020),
// keyed lower-case as the fork keys them, entries grouped by identical
// settings in the fork's order, strings as the fork has them (a missing
// comma in iterative/dvc's pre_install joins two commands, as there).
// spyder-ide/spyder is listed with no version: every row of it raises.
var sweGymTables = map[string][]gymSpec{
	"python/mypy": {
		{versions: "1.7 1.8 1.9 1.10 1.11",
			python:     "3.12",
			preInstall: []string{"git submodule update --init mypy/typeshed || true"},
			install:    "python -m pip install -r test-requirements.txt; python -m pip install -e .; hash -r",
			testCmd:    "pytest -rA -k"},
		{versions: "1.0 1.1 1.2 1.3 1.4 1.5 1.6",
			python:     "3.11",
			preInstall: []string{"git submodule update --init mypy/typeshed || true"},
			install:    "python -m pip install -r test-requirements.txt; python -m pip install -e .; hash -r",
			testCmd:    "pytest -n0 -rA -k"},
		{versions: "0.990 0.980 0.970 0.960 0.950 0.940",
			python:     "3.10",
			preInstall: []string{"git submodule update --init mypy/typeshed || true"},
			install:    "python -m pip install -r test-requirements.txt; python -m pip install -e .; pip install pytest pytest-xdist; hash -r",
			testCmd:    "pytest -n0 -rA -k"},
		{versions: "0.920 0.910 0.820 0.810 0.800",
			python:     "3.9",
			preInstall: []string{"git submodule update --init mypy/typeshed || true", "sed -i '1i types-typing-extensions==3.7.3' test-requirements.txt"},
			install:    "python -m pip install -r test-requirements.txt; python -m pip install -e .; pip install pytest pytest-xdist; hash -r;",
			testCmd:    "pytest -n0 -rA -k"},
	},
	"getmoto/moto": {
		{versions: "0.4 1.0 1.2 1.3 2.0 2.1 2.2 2.3 3.0 3.1 4.0 4.1 4.2 5.0",
			python:  "3.12",
			install: "make init",
			testCmd: "pytest -n0 -rA"},
	},
	"conan-io/conan": {
		{versions: "1.33 1.34 1.36 2.0 1.35 1.37 1.46 1.38 1.39 1.40 1.41 1.42 1.45 1.43 1.44 1.47 1.48 1.49 1.50 1.51 1.52 1.53 1.55 1.54 1.57 1.58 1.59",
			python:       "3.10",
			preInstall:   []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y build-essential cmake"},
			install:      "echo 'cython<3' > /tmp/constraint.txt; export PIP_CONSTRAINT=/tmp/constraint.txt; python -m pip install -r conans/requirements.txt; python -m pip install -r conans/requirements_server.txt; python -m pip install -r conans/requirements_dev.txt ",
			evalCommands: []string{"export PYTHONPATH=${PYTHONPATH:-}:$(pwd)"},
			testCmd:      "pytest -n0 -rA"},
		{versions: "2.1 1.60 1.61 1.62 2.2 2.3 2.4",
			python:       "3.10",
			preInstall:   []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y build-essential cmake"},
			install:      "python -m pip install -r conans/requirements.txt; python -m pip install -r conans/requirements_server.txt; python -m pip install -r conans/requirements_dev.txt ",
			evalCommands: []string{"export PYTHONPATH=${PYTHONPATH:-}:$(pwd)"},
			testCmd:      "pytest -n0 -rA"},
	},
	"dask/dask": {
		{versions: "2.11 2.12 2.13 2.14 2.15 2.16 2.17 2.18 2.19 2.21 2.22 2.23 2.25 2.26 2.27 2.28 2.29 2.30 2020.12 2021.01 2021.02 2021.03 2021.04 2021.05 2021.06 2021.07 2021.08 2021.09 2021.10 2021.11 2021.12 2022.01 2022.02 2022.03 2022.04 2022.05 2022.6 2022.7 2022.8 2022.9 2022.10 2022.11 2022.12 2023.1 2023.2 2023.3 2023.4 2023.5 2023.6 2023.7 2023.8 2023.9 2023.10 2023.11 2023.12 2024.1 2024.2 2024.3 2024.4 2024.5",
			install: "python -m pip install --no-deps -e .",
			testCmd: "pytest -n0 -rA  --color=no"},
	},
	"project-monai/monai": {
		{versions: "0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 0.11 0.105 1.0 1.1 1.2 1.3",
			python:  "3.8",
			install: "sed -i '/^git+https:\\/\\/github.com\\/Project-MONAI\\//d' requirements-dev.txt; python -m pip install types-pkg-resources==0.1.3 pytest; pip install -r requirements-dev.txt;python setup.py develop;",
			testCmd: "pytest -rA "},
	},
	"iterative/dvc": {
		{versions: "0.1 0.8 0.9 0.12 0.13 0.14 0.15 0.16 0.17 0.18 0.19 0.20 0.21 0.22 0.23 0.24 0.27 0.28 0.29 0.30 0.31 0.32 0.33 0.34 0.35 0.40 0.41 0.50 0.51 0.52 0.53 0.54 0.55 0.56 0.57 0.58 0.59 0.60 0.61 0.62 0.63 0.65 0.66 0.68 0.69 0.70 0.71 0.74 0.75 0.76 0.77 0.78 0.80 0.81 0.82 0.83 0.84 0.85 0.86 0.87 0.88 0.89 0.90 0.91 0.92 0.93",
			python:     "3.8",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y cmake", "[ -f setup.py ] && sed -E -i 's/moto==([0-9]+\\.[0-9]+\\.[0-9]+)\\.dev[0-9]+/moto==\\1/' setup.py", "[ -f setup.py ] && sed -i 's/pyarrow==0.15.1/pyarrow==0.16/' setup.py[ -f setup.py ] && sed -i 's/boto3==1.9.115/boto3==1.9.201/' setup.py"},
			install:    "python -m pip install --upgrade pip wheel GitPython; python -m pip install \"cython<3.0.0\" && python -m pip install --no-build-isolation pyyaml==5.4.1; python -m pip install git+https://github.com/iterative/mock-ssh-server.git || true; python -m pip install -r tests/requirements.txt || true; python -m pip install -r test-requirements.txt || true; python -m pip install -e \".[tests,dev,all_remotes,all,testing]\"; python -m pip install \"numpy<=1.20\"; python -m pip install \"pytest<8\";",
			testCmd:    "pytest -rA"},
		{versions: "1.0 1.1 1.2 1.3 1.4 1.5 1.6 1.7 1.8 1.9 1.10 1.11 2.0 2.1 2.2 2.3 2.4 2.5 2.6 2.7 2.8 2.9 2.10 2.11 2.12 2.13 2.15 2.17 2.19 2.20 2.21 2.22 2.23 2.24 2.27 2.28 2.30 2.33 2.34 2.35 2.38 2.41 2.43 2.44 2.45 2.46 2.48 2.50 2.51 2.52 2.54 2.55 2.56 2.57 2.58 3.0 3.1 3.2 3.3",
			python:     "3.9",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y cmake", "[ -f setup.py ] && sed -E -i 's/moto==([0-9]+\\.[0-9]+\\.[0-9]+)\\.dev[0-9]+/moto==\\1/' setup.py", "[ -f setup.py ] && sed -i 's/pyarrow==0.15.1/pyarrow==0.16/' setup.py[ -f setup.py ] && sed -i 's/boto3==1.9.115/boto3==1.9.201/' setup.py"},
			install:    "python -m pip install --upgrade pip wheel GitPython; python -m pip install \"cython<3.0.0\" && python -m pip install --no-build-isolation pyyaml==5.4.1; python -m pip install git+https://github.com/iterative/mock-ssh-server.git || true; python -m pip install -r tests/requirements.txt || true; python -m pip install -r test-requirements.txt || true; python -m pip install -e \".[tests,dev,all_remotes,all,testing]\"; python -m pip install \"numpy<=1.20\"; python -m pip install \"pytest<8\";",
			testCmd:    "pytest -rA"},
		{versions: "3.4 3.5 3.6 3.10 3.11 3.12 3.13 3.14 3.15 3.17 3.19 3.23 3.24 3.28 3.29 3.36 3.37 3.38 3.43 3.47 3.48 3.49",
			python:     "3.10",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y cmake", "[ -f setup.py ] && sed -E -i 's/moto==([0-9]+\\.[0-9]+\\.[0-9]+)\\.dev[0-9]+/moto==\\1/' setup.py", "[ -f setup.py ] && sed -i 's/pyarrow==0.15.1/pyarrow==0.16/' setup.py[ -f setup.py ] && sed -i 's/boto3==1.9.115/boto3==1.9.201/' setup.py"},
			install:    "python -m pip install --upgrade pip wheel GitPython; python -m pip install \"cython<3.0.0\" && python -m pip install --no-build-isolation pyyaml==5.4.1; python -m pip install git+https://github.com/iterative/mock-ssh-server.git || true; python -m pip install -r tests/requirements.txt || true; python -m pip install -r test-requirements.txt || true; python -m pip install -e \".[tests,dev,all_remotes,all,testing]\";",
			testCmd:    "pytest -rA"},
	},
	"bokeh/bokeh": {
		{versions: "3.0 3.3 3.4 3.5",
			python:     "3.10",
			preInstall: []string{"cd bokehjs && npm install --location=global npm && npm ci && cd ../"},
			install:    "python -m pip install -e .; python -m pip install bokeh_sampledata;",
			testCmd:    "pytest -rA -n0"},
		{versions: "2.0 2.1 2.3 2.4 0.4 0.5 0.6 0.7 0.8 0.9 0.10 0.11 0.12 0.13 0.1181316818 1.0 1.1 1.2 1.3 1.4",
			python:     "3.8",
			preInstall: []string{"cd bokehjs && npm install --location=global npm && npm ci && cd ../"},
			install:    "pip install \"setuptools<66\" \"jinja2<3.1\"; printf \"1\n\" | python setup.py develop; bokeh sampledata;",
			testCmd:    "pytest -rA -n0"},
	},
	"modin-project/modin": {
		{versions: "0.1 0.2 0.3 0.4 0.6 0.8 0.9 0.10 0.11 0.12 0.13 0.14 0.15 0.16 0.17 0.18 0.19",
			python:     "3.8",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y libpq-dev"},
			install:    "python -m pip install -e .; python -m pip install numpy==1.23.1 protobuf==3.20.1;",
			testCmd:    "pytest -n0 -rA"},
		{versions: "0.20 0.21 0.22 0.23 0.24 0.25 0.26 0.27 0.28 0.29 0.30",
			python:     "3.9",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y libpq-dev"},
			install:    "python -m pip install -e .;",
			testCmd:    "pytest -n0 -rA"},
	},
	"spyder-ide/spyder": {},
	"hypothesisworks/hypothesis": {
		{versions: "3.55 3.61 3.60 3.59 3.63 3.66 3.67 3.68 3.69 3.70 5.1 5.5 5.24 5.6 5.9 5.8 5.10 5.12 5.15 5.20 5.23 5.36 5.32 5.33 5.38 5.41 5.42 5.43 5.47 6.1 6.4 6.6 6.8 6.14 6.13 6.18 6.21 6.24 6.28 6.29 3.73 3.71 3.75 3.79 3.82 3.85 3.88 4.0 3.86 4.2 4.4 4.15 4.12 4.14 4.18 4.23 4.24 4.26 4.32 4.38 4.40 4.42 4.46 4.44 4.50 4.54 4.55 5.2 5.4 6.30 6.31",
			python:  "3.9",
			install: "python -m pip install -r requirements/test.txt; python -m pip install -e hypothesis-python/;",
			testCmd: "pytest -n0 -rA --tb=no --no-header"},
		{versions: "6.36 6.40 6.43 6.53 6.45 6.46 6.47 6.50 6.54 6.59 6.62 6.66 6.71 6.74 6.77 6.81 6.87 6.88 6.93 6.98 6.99 6.100 6.102",
			python:  "3.10",
			install: "python -m pip install -r requirements/test.txt; python -m pip install -e hypothesis-python/;",
			testCmd: "pytest -n0 -rA --tb=no --no-header"},
	},
	"pydantic/pydantic": {
		{versions: "0.2 0.41 0.4 0.6 0.9 0.10 0.11 0.13 0.14 0.151 0.15 0.17 0.18 0.201 0.20 0.24 0.27 0.29 1.01 0.32 1.4 1.31 1.41 1.51 1.5 1.71 1.6 1.7 1.8 1.9 1.10",
			python:     "3.7",
			preInstall: []string{"apt-get update && apt-get install -y locales", "apt-get install -y pipx", "pipx ensurepath", "pipx install pdm  --python python3.7", "export PATH=\"$HOME/.local/bin:$PATH\"", "which python", "python --version"},
			install:    "export PATH=\"$HOME/.local/bin:$PATH\"; pdm add pre-commit; make install;",
			testCmd:    "pytest -rA --tb=short -vv -o console_output_style=classic --no-header"},
		{versions: "2.0 2.01 2.02 2.03 2.04 2.6 2.5 2.4 2.7",
			python:     "3.8",
			preInstall: []string{"apt-get update && apt-get install -y locales", "apt-get install -y pipx", "pipx ensurepath", "pipx install pdm", "export PATH=\"$HOME/.local/bin:$PATH\"", "which python", "python --version"},
			install:    "export PATH=\"$HOME/.local/bin:$PATH\"; pdm add pre-commit; make install;",
			testCmd:    "pytest -rA --tb=short -vv -o console_output_style=classic --no-header"},
	},
	"pandas-dev/pandas": {
		{versions: "0.16 0.17 0.18 0.19 0.20 0.21 0.22 0.23 0.24 0.25 0.26 1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1",
			preInstall: []string{"git remote add upstream https://github.com/pandas-dev/pandas.git", "git fetch upstream --tags"},
			install:    "python -m pip install 'numpy<2'; python -m pip install -ve . --no-build-isolation -Ceditable-verbose=true; pip uninstall pytest-qt -y;",
			testCmd:    "pytest -rA --tb=long"},
		{versions: "2.2 3.0",
			preInstall: []string{"git remote add upstream https://github.com/pandas-dev/pandas.git", "git fetch upstream --tags"},
			install:    "python -m pip install -ve . --no-build-isolation -Ceditable-verbose=true; pip uninstall pytest-qt -y;",
			testCmd:    "pytest -rA --tb=long"},
	},
	"facebookresearch/hydra": {
		{versions: "0.1 0.9 0.10 0.11 0.12 1.0 1.1 1.2",
			python:     "3.8",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y openjdk-17-jdk openjdk-17-jre"},
			install:    "sed -i 's|isort@git+git://github.com/timothycrosley/isort|isort@git+https://github.com/timothycrosley/isort|g' requirements/dev.txt; { tail -n1 requirements/requirements.txt | grep -q \".\" && echo \"\"; } >> requirements/requirements.txt; echo \"pip==24.0\" >> requirements/requirements.txt;pip install \"pip==24.0\"; pip install -r requirements/dev.txt; pip install -e .;",
			testCmd:    "pytest -rA --tb=long"},
		{versions: "1.3 1.4",
			python:     "3.8",
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && apt-get install -y openjdk-17-jdk openjdk-17-jre"},
			install:    "pip install -r requirements/dev.txt; pip install -e .;",
			testCmd:    "pytest -rA --tb=long"},
	},
}

// GradingSWEGym is SWE-Gym's rule (SWE-Gym/SWE-Bench-Fork, SWE-bench
// 2.0.13's get_logs_eval and get_eval_report, at 242429c): the official
// rule, but the parser reads the whole log, which is usable only where it
// says "applied patch" and holds no failure marker.
const GradingSWEGym harness.Grading = "swe-gym"

// ScriptSWEBench2 is the eval script of SWE-bench 2.0.13
// (test_spec.py's make_eval_script_list), which SWE-bench's forks of that
// release keep (SWE-Gym/SWE-Bench-Fork): "set -xo pipefail", "git diff
// <base>" without -c core.fileMode=false, and no start or end marker
// around the test command, whose output the release's grader reads whole.
const ScriptSWEBench2 spec.ScriptStyle = "swe-bench-2.0.13"

// sweBench2Script is eval.sh in the ScriptSWEBench2 style: as the official
// v4.1.0 Python script, with the differences above. The exit-code lines
// follow the test command unless opts.NoExitCode (the release has none;
// the grader never reads them), and opts.BeforeTestOutput goes right
// before the test command.
func sweBench2Script(s spec.TestSpec, opts spec.ScriptOptions) string {
	reset := "git checkout " + s.BaseCommit + " " + strings.Join(opts.Quote(s.TestFiles), " ")
	var lines []string
	lines = append(lines, s.CondaLines()...)
	lines = append(lines, "cd "+harness.RepoDir)
	lines = append(lines, s.EvalCommands...)
	lines = append(lines,
		"git config --global --add safe.directory "+harness.RepoDir,
		"cd "+harness.RepoDir,
		"git status",
		"git show",
		"git diff "+s.BaseCommit,
	)
	lines = append(lines, s.CondaLines()...)
	if s.Install != "" && !opts.SkipInstall {
		lines = append(lines, s.Install)
	}
	lines = append(lines,
		reset,
		"git apply -v - <<'"+spec.HeredocDelimiter+"'\n"+s.TestPatch+"\n"+spec.HeredocDelimiter,
	)
	lines = append(lines, opts.BeforeTestOutput...)
	lines = append(lines, strings.Join(append([]string{s.TestCmd}, opts.Quote(s.Directives)...), " "))
	if !opts.NoExitCode {
		lines = append(lines, spec.TestExitCodeVar+"=$?", spec.ExitCodeEcho)
	}
	lines = append(lines, reset)
	return strings.Join(append([]string{spec.ScriptShebang, "set -xo pipefail"}, lines...), "\n") + "\n"
}

// ParserPytestPydantic names SWE-Gym's fork's parse_log_pytest_pydantic,
// the one parser of SWE-Gym/SWE-Bench-Fork that the official harness does
// not have. Only [GradingSWEGym] knows it.
const ParserPytestPydantic = "pytest_pydantic"

// sweGymResetFailed is a failure text of 2.0.13's get_logs_eval beside
// the official markers.
const sweGymResetFailed = "Failed to reset task environment"

// gradeSWEGym is Grade under SWE-Gym's rule (SWE-Gym/SWE-Bench-Fork at
// 242429c, SWE-bench 2.0.13): a log holding a failure marker anywhere, or
// not saying "applied patch" in any letter case (git apply -v's "Applied
// patch <file> cleanly." of the test patch), is unusable; otherwise the
// parser reads the whole log, everything after the last ">>>>> Applied
// Patch (pred)" when the log holds one, as v4's pytest parsers do; and
// the official rule grades.
func gradeSWEGym(in grade.Input) (grade.InstanceReport, error) {
	rep, done := grade.StartReport(in, harness.V4, GradingSWEGym)
	if done {
		return rep, nil
	}
	parse := parseSWEGymPydantic
	if in.Parser != ParserPytestPydantic {
		p, ok := logparse.Bind(in.Parser, logparse.Target{InstanceID: in.InstanceID, Version: in.Version})
		if !ok {
			return rep, fmt.Errorf("grade %s: %w", in.InstanceID, &logparse.UnknownParserError{Name: in.Parser})
		}
		parse = func(log string) (logparse.StatusMap, error) { return p(log, harness.V4) }
	}
	text := grade.UniversalNewlines(in.Log)
	for _, marker := range append(grade.FailureMarkers(), sweGymResetFailed) {
		if strings.Contains(text, marker) {
			rep.Evaluation.Reason, rep.Evaluation.Marker = grade.ReasonFailureMarker, marker
			return rep, nil
		}
	}
	// Python's str.lower and strings.ToLower differ only on characters
	// that cannot form "applied patch".
	if !strings.Contains(strings.ToLower(text), "applied patch") {
		rep.Evaluation.Reason = ReasonNoAppliedPatch
		return rep, nil
	}
	if i := strings.LastIndex(text, harness.AppliedPatchMarker+" (pred)"); i >= 0 {
		text = text[i+len(harness.AppliedPatchMarker+" (pred)"):]
	}
	sm, err := parse(text)
	if err != nil {
		return rep, fmt.Errorf("grade %s: parse test output: %w", in.InstanceID, err)
	}
	rep.Evaluation.Usable, rep.Evaluation.WholeLog, rep.StatusMap = true, true, sm
	rep.PatchSuccessfullyApplied = true
	ts := grade.GradeTests(sm, in.FailToPass, in.PassToPass, false, harness.V4)
	rep.TestsStatus = &ts
	rep.Resolved = ts.Resolution() == grade.ResolvedFull
	return rep, nil
}

// ReasonNoAppliedPatch (SWE-Gym's rule): the log nowhere says "applied
// patch".
const ReasonNoAppliedPatch grade.Reason = "no_applied_patch"

var (
	pydanticColour = regexp.MustCompile(`\[(\d+)m`)
	pydanticFailed = regexp.MustCompile(`FAILED\s*\[.*?\]`)
	pydanticStrip  = func() *strings.Replacer {
		var pairs []string
		for c := 1; c < 32; c++ {
			pairs = append(pairs, string(rune(c)), "")
		}
		return strings.NewReplacer(pairs...)
	}()
	pydanticStatuses = []logparse.Status{logparse.FAILED, logparse.PASSED, logparse.SKIPPED, logparse.ERROR, logparse.XFAIL}
)

// parseSWEGymPydantic is the fork's parse_log_pytest_pydantic: v4's
// pytest_v2 that also drops a "[...]" after FAILED, and, unlike it, does
// not skip a line of one word: Python raises IndexError there, and so
// does this ([logparse.ErrParserRaised]).
func parseSWEGymPydantic(log string) (logparse.StatusMap, error) {
	m := logparse.StatusMap{}
	has := func(line string, fn func(string, string) bool) bool {
		for _, s := range pydanticStatuses {
			if fn(line, string(s)) {
				return true
			}
		}
		return false
	}
	for _, line := range strings.Split(log, "\n") {
		line = pydanticColour.ReplaceAllString(line, "")
		line = pydanticStrip.Replace(line)
		line = pydanticFailed.ReplaceAllString(line, "FAILED")
		switch {
		case has(line, strings.HasPrefix):
			if strings.HasPrefix(line, string(logparse.FAILED)) {
				line = strings.ReplaceAll(line, " - ", " ")
			}
			tok := strings.Fields(line) // str.split(): the control characters are gone
			if len(tok) < 2 {
				return nil, fmt.Errorf("parse_log_pytest_pydantic: line %q has no test name: %w", line, logparse.ErrParserRaised)
			}
			m[tok[1]] = logparse.Status(tok[0])
		case has(line, strings.HasSuffix):
			tok := strings.Fields(line) // str.split(): the control characters are gone
			if len(tok) < 2 {
				return nil, fmt.Errorf("parse_log_pytest_pydantic: line %q has no status after a name: %w", line, logparse.ErrParserRaised)
			}
			m[tok[0]] = logparse.Status(tok[1])
		}
	}
	return m, nil
}
