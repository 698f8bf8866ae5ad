#!/usr/bin/env python3
"""Runs the official SWE-bench harness (v4.1.0) on this machine's Docker engine,
for side-by-side runs with `eval` (scripts/prebuilt-bench.sh).

    python3 official-harness-v4.py SWEBENCH_DIR SPECS_JSON -- RUN_EVALUATION_ARGS...

SWEBENCH_DIR holds upstream's `swebench` package, extracted from its
repository (kept out of this one):

    git -C SWE-bench archive v4.1.0 swebench | tar -x -C /tmp/swebench-4.1.0

Modal is stubbed, and so are the modules that only reach the network
(datasets, requests, dotenv) and the progress bar (tqdm) and unidiff, which
the Python path never calls, where they are not installed (docker-py needs
the real requests; OFFICIAL_EXTRA_PATH appends directories to sys.path); swebench/__init__.py, which imports the dataset collection
tools, is bypassed. SPECS_JSON adds repositories to the official tables as
{"owner/name": {"version": {"test_cmd": ..., "install": ...}}}, graded with
the official pytest parser. Needs python3-docker.
"""
import importlib.util
import json
import os
import sys
import types


def stub(name, **attrs):
    """Installs a stand-in for module name unless it can be imported."""
    if not attrs.pop("force", False):
        try:
            importlib.import_module(name)
            return sys.modules[name]
        except ImportError:
            pass
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def offline(*args, **kwargs):
    raise RuntimeError("network access is stubbed out in this side-by-side run")


class Bar:
    """tqdm's interface as run_evaluation uses it."""

    def __init__(self, *args, total=None, **kwargs):
        self.total = total

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass

    def set_description(self, *args, **kwargs):
        pass


def main():
    root, specs_path = sys.argv[1], sys.argv[2]
    # Further directories to import from, after this interpreter's own (e.g.
    # Debian's dist-packages for python3-unidiff beside a newer docker-py).
    sys.path.extend(p for p in os.environ.get("OFFICIAL_EXTRA_PATH", "").split(":") if p)
    args = sys.argv[sys.argv.index("--") + 1:]
    stub("datasets", Dataset=list, load_dataset=offline, load_from_disk=offline)
    stub("requests", get=offline, head=offline, post=offline)
    stub("dotenv", load_dotenv=lambda *a, **k: None)
    stub("unidiff", PatchSet=offline)
    stub("tqdm")
    stub("tqdm.auto", tqdm=Bar)
    stub("modal", force=True)
    stub("swebench.harness.modal_eval", run_instances_modal=offline, validate_modal_credentials=offline, force=True)
    # The package without its __init__, which imports the collection tools.
    pkg = types.ModuleType("swebench")
    pkg.__path__ = [root + "/swebench"]
    sys.modules["swebench"] = pkg
    spec = importlib.util.find_spec("swebench.harness")
    assert spec is not None, f"no swebench/harness under {root}"

    from swebench.harness.constants import MAP_REPO_TO_EXT, MAP_REPO_VERSION_TO_SPECS
    from swebench.harness.log_parsers import MAP_REPO_TO_PARSER
    from swebench.harness.log_parsers.python import parse_log_pytest
    from swebench.harness import run_evaluation

    with open(specs_path) as f:
        for repo, versions in json.load(f).items():
            MAP_REPO_VERSION_TO_SPECS[repo] = versions
            MAP_REPO_TO_EXT[repo] = "py"
            MAP_REPO_TO_PARSER[repo] = parse_log_pytest
    sys.argv = ["run_evaluation"] + args
    # run_evaluation's own command line, as its __main__ block parses it.
    src = open(run_evaluation.__file__).read()
    main_block = src[src.index('if __name__ == "__main__":'):]
    exec(compile(main_block.replace('if __name__ == "__main__":', "if True:", 1), run_evaluation.__file__, "exec"),
         run_evaluation.__dict__)


if __name__ == "__main__":
    main()
