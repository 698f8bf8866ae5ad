"""Writes the eval scripts of official SWE-bench v4.1.0 for the instances in
instances.json, with upstream's own code, as <instance_id>.eval.sh.

  git -C SWE-bench archive v4.1.0 swebench | tar -x -C /tmp/sweb41
  /usr/bin/python3 generate.py /tmp/sweb41     # needs python3-unidiff

Only the modules that build eval scripts are loaded; the harness's other
imports (docker, datasets, ...) are stubbed.
"""
import json
import os
import sys
import types

root = sys.argv[1]
sys.path.insert(0, root)
for name in ["swebench", "swebench.harness", "swebench.harness.test_spec"]:
    module = types.ModuleType(name)
    module.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = module
for stub in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers",
             "dotenv", "ghapi", "ghapi.core", "git", "tqdm", "requests", "bs4", "fastcore", "fastcore.net", "modal"]:
    module = types.ModuleType(stub)
    module.__getattr__ = lambda attr: type(attr, (), {})
    sys.modules[stub] = module

from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS  # noqa: E402
from swebench.harness.test_spec.create_scripts import make_eval_script_list  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "instances.json")) as f:
    instances = json.load(f)
for inst in instances:
    specs = MAP_REPO_VERSION_TO_SPECS[inst["repo"]][inst["version"]]
    lines = make_eval_script_list(inst, specs, "testbed", "/testbed", inst["base_commit"], inst["test_patch"])
    script = "\n".join(["#!/bin/bash", "set -uxo pipefail"] + lines) + "\n"
    with open(os.path.join(here, inst["instance_id"] + ".eval.sh"), "w") as f:
        f.write(script)
