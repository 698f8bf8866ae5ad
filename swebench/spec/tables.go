package spec

// The official per-repository, per-version specifications of the SWE-bench
// Python repositories (MAP_REPO_VERSION_TO_SPECS_PY of the official harness,
// v4.1.0 test commands; the parsers are harness.ParserForInstance). Only the fields that
// shape evaluation are kept: the test command, install, pre_install (image
// build only), eval_commands, the Python version and CPU limit.

// Official test commands. TEST_PYTEST is defined twice upstream; the
// second definition, "pytest -rA", is the one in effect.
const (
	testPytest        = "pytest -rA"
	testAstropyPytest = "pytest -rA -vv -o console_output_style=classic --tb=no"
	testDjango        = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
	testDjangoNoPar   = "./tests/runtests.py --verbosity 2"
	testSeaborn       = "pytest --no-header -rA"
	testSphinx        = "tox --current-env -epy39 -v --"
	testSympy         = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
)

// versionSpec is one entry of a repository's table.
type versionSpec struct {
	testCmd      string
	install      string
	preInstall   []string
	evalCommands []string
	python       string
	nanoCPUs     int64
}

type repoTable struct {
	// noParser: the official table has no log parser for the repository
	// (humaneval; grading it raises KeyError upstream), so Parser stays
	// empty.
	noParser   bool
	directives DirectiveStyle
	versions   map[string]versionSpec
	// latest is the version whose entry stands in for versions missing
	// from the table (the official harness raises KeyError there).
	latest string
}

// add sets the same entry for several versions; later calls override
// earlier ones, as the upstream dict updates do.
func (t *repoTable) add(s versionSpec, versions ...string) *repoTable {
	if t.versions == nil {
		t.versions = map[string]versionSpec{}
	}
	for _, v := range versions {
		t.versions[v] = s
	}
	return t
}

// edit changes the entries of the given versions in place.
func (t *repoTable) edit(f func(*versionSpec), versions ...string) *repoTable {
	for _, v := range versions {
		s := t.versions[v]
		f(&s)
		t.versions[v] = s
	}
	return t
}

func table(latest string) *repoTable {
	return &repoTable{directives: DirectivesFiles, latest: latest}
}

const (
	pipE  = "python -m pip install -e ."
	aptUp = "apt-get update && apt-get install -y "
)

var qhull = []string{
	`QHULL_URL="http://www.qhull.org/download/qhull-2020-src-8.0.2.tgz"`,
	`QHULL_TAR="/tmp/qhull-2020-src-8.0.2.tgz"`,
	`QHULL_BUILD_DIR="/testbed/build"`,
	`wget -O "$QHULL_TAR" "$QHULL_URL"`,
	`mkdir -p "$QHULL_BUILD_DIR"`,
	`tar -xvzf "$QHULL_TAR" -C "$QHULL_BUILD_DIR"`,
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var tables = map[string]*repoTable{
	"astropy/astropy": func() *repoTable {
		t := table("v5.3")
		t.add(versionSpec{testCmd: testPytest, install: "python -m pip install -e .[test] --verbose", python: "3.9"},
			"3.0", "3.1", "3.2", "4.1", "4.2", "4.3", "5.0", "5.1", "5.2", "v5.3")
		t.add(versionSpec{testCmd: testAstropyPytest, install: "python -m pip install -e .[test] --verbose", python: "3.6"},
			"0.1", "0.2", "0.3", "0.4", "1.1", "1.2", "1.3")
		t.edit(func(s *versionSpec) {
			s.preInstall = []string{`sed -i 's/requires = \["setuptools",/requires = \["setuptools==68.0.0",/' pyproject.toml`}
		}, "4.1", "4.2", "4.3", "5.0", "5.1", "5.2", "v5.3")
		t.edit(func(s *versionSpec) { s.python = "3.10" }, "v5.3")
		return t
	}(),
	"django/django": func() *repoTable {
		t := table("5.2")
		t.directives = DirectivesDjango
		t.add(versionSpec{testCmd: testDjango, install: "python setup.py install", python: "3.5",
			preInstall: []string{
				"apt-get update && apt-get install -y locales",
				"echo 'en_US UTF-8' > /etc/locale.gen",
				"locale-gen en_US.UTF-8",
			},
			evalCommands: []string{
				"export LANG=en_US.UTF-8",
				"export LC_ALL=en_US.UTF-8",
				"export PYTHONIOENCODING=utf8",
				"export LANGUAGE=en_US:en",
			},
		}, "1.7", "1.8", "1.9", "1.10", "1.11", "2.0", "2.1", "2.2")
		t.add(versionSpec{testCmd: testDjango, install: "python setup.py install", python: "3.5"}, "1.4", "1.5", "1.6")
		t.add(versionSpec{testCmd: testDjango, install: pipE, python: "3.6",
			evalCommands: []string{
				"sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",
				"export LANG=en_US.UTF-8",
				"export LANGUAGE=en_US:en",
				"export LC_ALL=en_US.UTF-8",
			},
		}, "3.0", "3.1", "3.2")
		t.add(versionSpec{testCmd: testDjango, install: pipE, python: "3.8"}, "4.0")
		t.add(versionSpec{testCmd: testDjango, install: pipE, python: "3.9"}, "4.1", "4.2")
		t.add(versionSpec{testCmd: testDjango, install: pipE, python: "3.11"}, "5.0", "5.1", "5.2")
		t.edit(func(s *versionSpec) { s.testCmd = testDjangoNoPar }, "1.9")
		return t
	}(),
	"matplotlib/matplotlib": func() *repoTable {
		t := table("3.9")
		t.add(versionSpec{testCmd: testPytest, install: pipE, python: "3.11",
			preInstall: concat([]string{"apt-get -y update && apt-get -y upgrade && DEBIAN_FRONTEND=noninteractive apt-get install -y imagemagick ffmpeg texlive texlive-latex-extra texlive-fonts-recommended texlive-xetex texlive-luatex cm-super dvipng"}, qhull),
		}, "3.5", "3.6", "3.7", "3.8", "3.9")
		t.add(versionSpec{testCmd: testPytest, install: pipE, python: "3.8",
			preInstall: concat([]string{"apt-get -y update && apt-get -y upgrade && DEBIAN_FRONTEND=noninteractive apt-get install -y imagemagick ffmpeg libfreetype6-dev pkg-config texlive texlive-latex-extra texlive-fonts-recommended texlive-xetex texlive-luatex cm-super"}, qhull),
		}, "3.1", "3.2", "3.3", "3.4")
		t.add(versionSpec{testCmd: testPytest, install: pipE, python: "3.7",
			preInstall: concat([]string{"apt-get -y update && apt-get -y upgrade && apt-get install -y imagemagick ffmpeg libfreetype6-dev pkg-config"}, qhull),
		}, "3.0")
		t.add(versionSpec{testCmd: testPytest, install: "python setup.py build; python setup.py install", python: "3.5",
			// Upstream has the doubled "&& &&" too.
			preInstall: []string{"apt-get -y update && apt-get -y upgrade && && apt-get install -y imagemagick ffmpeg"},
		}, "2.0", "2.1", "2.2", "1.0", "1.1", "1.2", "1.3", "1.4", "1.5")
		t.edit(func(s *versionSpec) { s.install = `python -m pip install --no-build-isolation -e ".[dev]"` }, "3.8", "3.9")
		return t
	}(),
	"marshmallow-code/marshmallow": table("3.19").add(
		versionSpec{testCmd: testPytest, install: "python -m pip install -e '.[dev]'", python: "3.9"},
		"2.18", "2.19", "2.20", "3.0", "3.1", "3.10", "3.11", "3.12", "3.13", "3.15", "3.16", "3.19", "3.2", "3.4", "3.8", "3.9"),
	"mwaskom/seaborn": table("0.14").
		add(versionSpec{testCmd: testSeaborn, install: pipE, python: "3.9"}, "0.11").
		add(versionSpec{testCmd: testSeaborn, install: "python -m pip install -e .[dev]", python: "3.9"}, "0.12", "0.13", "0.14"),
	"pallets/flask": table("3.1").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9"}, "2.0").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.10"}, "2.1").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.11"}, "2.2", "2.3", "3.0", "3.1"),
	"psf/requests": table("3.0").add(
		versionSpec{testCmd: testPytest, install: "python -m pip install .", python: "3.9"},
		"0.7", "0.8", "0.9", "0.11", "0.13", "0.14", "1.1", "1.2", "2.0", "2.2",
		"2.3", "2.4", "2.5", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.17",
		"2.18", "2.19", "2.22", "2.26", "2.25", "2.27", "2.31", "3.0"),
	"pvlib/pvlib-python": table("0.9").add(
		versionSpec{testCmd: testPytest, install: "python -m pip install -e .[all]", python: "3.9"},
		"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"),
	"pydata/xarray": table("2024.05").add(
		versionSpec{testCmd: testPytest, install: pipE, python: "3.10"},
		"0.12", "0.18", "0.19", "0.20", "2022.03", "2022.06", "2022.09", "2023.07", "2024.05"),
	"pydicom/pydicom": table("3.0").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.6"}, "1.0", "1.1", "1.2", "1.3").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.8"}, "1.4", "2.0").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9"}, "2.1", "2.2").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.10"}, "2.3").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.11"}, "2.4", "3.0"),
	"pylint-dev/astroid": table("3.0").add(
		versionSpec{testCmd: testPytest, install: pipE, python: "3.9"},
		"2.10", "2.12", "2.13", "2.14", "2.15", "2.16", "2.5", "2.6", "2.7", "2.8", "2.9", "3.0"),
	"pylint-dev/pylint": table("4.0").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9"},
			"2.10", "2.11", "2.13", "2.14", "2.15", "2.16", "2.17", "2.8", "2.9", "3.0", "3.1", "3.2", "3.3", "4.0").
		edit(func(s *versionSpec) {
			s.preInstall = []string{aptUp + "libenchant-2-dev hunspell-en-us"}
		}, "2.8").
		// nano_cpus=2e9: a CPU-count-dependent skip in pylint's tests (#545).
		edit(func(s *versionSpec) { s.nanoCPUs = 2e9 }, "2.14", "2.15", "2.17", "3.0", "3.1", "3.2", "3.3", "4.0"),
	"pytest-dev/pytest": table("8.4").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9"},
			"4.4", "4.5", "4.6", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.2", "6.3",
			"7.0", "7.1", "7.2", "7.4", "8.0", "8.1", "8.2", "8.3", "8.4").
		edit(func(s *versionSpec) { s.preInstall = []string{"sed -i 's/>=>=/>=/' setup.cfg"} }, "6.3"),
	"pyvista/pyvista": table("0.43").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9"}, "0.20", "0.21", "0.22", "0.23").
		add(versionSpec{testCmd: testPytest, install: pipE, python: "3.9",
			preInstall: []string{aptUp + "ffmpeg libsm6 libxext6 libxrender1"}},
			"0.24", "0.25", "0.26", "0.27", "0.28", "0.29", "0.30", "0.31", "0.32", "0.33",
			"0.34", "0.35", "0.36", "0.37", "0.38", "0.39", "0.40", "0.41", "0.42", "0.43"),
	"scikit-learn/scikit-learn": table("1.6").
		add(versionSpec{testCmd: testPytest, install: "python -m pip install -v --no-use-pep517 --no-build-isolation -e .", python: "3.6"},
			"0.20", "0.21", "0.22").
		add(versionSpec{testCmd: testPytest, install: "python -m pip install -v --no-use-pep517 --no-build-isolation -e .", python: "3.9"},
			"1.3", "1.4", "1.5", "1.6"),
	"sphinx-doc/sphinx": sphinxTable(),
	"sqlfluff/sqlfluff": table("2.2").add(
		versionSpec{testCmd: testPytest, install: pipE, python: "3.9"},
		"0.10", "0.11", "0.12", "0.13", "0.4", "0.5", "0.6", "0.8", "0.9",
		"1.0", "1.1", "1.2", "1.3", "1.4", "2.0", "2.1", "2.2"),
	"sympy/sympy": table("1.14").add(
		versionSpec{testCmd: testSympy, install: pipE, python: "3.9"},
		"0.7", "1.0", "1.1", "1.10", "1.11", "1.12", "1.2", "1.4", "1.5", "1.6",
		"1.7", "1.8", "1.9", "1.13", "1.14"),
	"swe-bench/humaneval": func() *repoTable {
		t := table("1.0").add(versionSpec{testCmd: "python", python: "3.9"}, "1.0")
		t.directives, t.noParser = directivesHumanEval, true
		return t
	}(),
}

func sphinxTable() *repoTable {
	t := table("8.1")
	versions := []string{"1.5", "1.6", "1.7", "1.8", "2.0", "2.1", "2.2", "2.3", "2.4", "3.0",
		"3.1", "3.2", "3.3", "3.4", "3.5", "4.0", "4.1", "4.2", "4.3", "4.4",
		"4.5", "5.0", "5.1", "5.2", "5.3", "6.0", "6.2", "7.0", "7.1", "7.2",
		"7.3", "7.4", "8.0", "8.1"}
	for _, v := range versions {
		t.add(versionSpec{testCmd: testSphinx, install: "python -m pip install -e .[test]", python: "3.9",
			preInstall: []string{"sed -i 's/pytest/pytest -rA/' tox.ini"}}, v)
	}
	pin := []string{
		"sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
		"sed -i 's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py",
		"sed -i 's/sphinxcontrib-devhelp/sphinxcontrib-devhelp<=1.0.5/' setup.py",
		"sed -i 's/sphinxcontrib-qthelp/sphinxcontrib-qthelp<=1.0.6/' setup.py",
		"sed -i 's/alabaster>=0.7,<0.8/alabaster>=0.7,<0.7.12/' setup.py",
		`sed -i "s/'packaging',/'packaging', 'markupsafe<=2.0.1',/" setup.py`,
	}
	for _, v := range []string{"3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "4.0", "4.1", "4.2", "4.3", "4.4"} {
		var more []string
		switch v {
		case "4.2", "4.3", "4.4":
			more = []string{
				"sed -i 's/sphinxcontrib-htmlhelp>=2.0.0/sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4/' setup.py",
				"sed -i 's/sphinxcontrib-serializinghtml>=1.1.5/sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9/' setup.py",
			}
		case "4.1":
			more = []string{
				"grep -q 'sphinxcontrib-htmlhelp>=2.0.0' setup.py && " +
					"sed -i 's/sphinxcontrib-htmlhelp>=2.0.0/sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4/' setup.py || " +
					"sed -i 's/sphinxcontrib-htmlhelp/sphinxcontrib-htmlhelp<=2.0.4/' setup.py",
				"grep -q 'sphinxcontrib-serializinghtml>=1.1.5' setup.py && " +
					"sed -i 's/sphinxcontrib-serializinghtml>=1.1.5/sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9/' setup.py || " +
					"sed -i 's/sphinxcontrib-serializinghtml/sphinxcontrib-serializinghtml<=1.1.9/' setup.py",
			}
		default:
			more = []string{
				"sed -i 's/sphinxcontrib-htmlhelp/sphinxcontrib-htmlhelp<=2.0.4/' setup.py",
				"sed -i 's/sphinxcontrib-serializinghtml/sphinxcontrib-serializinghtml<=1.1.9/' setup.py",
			}
		}
		t.edit(func(s *versionSpec) { s.preInstall = concat(s.preInstall, pin, more) }, v)
	}
	t.edit(func(s *versionSpec) { s.preInstall = concat(s.preInstall, []string{aptUp + "graphviz"}) },
		"7.2", "7.3", "7.4", "8.0", "8.1")
	t.edit(func(s *versionSpec) { s.python = "3.10" }, "8.0", "8.1")
	return t
}

// Repos lists the repositories that have an official table, sorted.
func Repos() []string {
	out := make([]string, 0, len(tables))
	for r := range tables {
		out = append(out, r)
	}
	sortStrings(out)
	return out
}

// Versions lists a repository's official versions, sorted as strings.
func Versions(repo string) []string {
	t := tables[repo]
	if t == nil {
		return nil
	}
	out := make([]string, 0, len(t.versions))
	for v := range t.versions {
		out = append(out, v)
	}
	sortStrings(out)
	return out
}
