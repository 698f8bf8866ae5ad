"""Runs the official harness's own log parsers, from a checkout of
SWE-bench/SWE-bench given as argv[1] (for example
`git archive v4.1.0 swebench | tar -x -C DIR`), for upstream_test.go.

Reads a JSON list of {"parser", "log", "instance_id", "version"} on stdin
and writes [{"map": {...}} | {"error": "ExceptionName"} | {"missing": true}]:
"missing" when that release has no such parser. Only the log_parsers
modules are imported; their other imports are stubbed.
"""
import contextlib
import importlib
import json
import os
import sys
import types

root = sys.argv[1]
sys.path.insert(0, root)


class _Stub(types.ModuleType):
    def __getattr__(self, attr):
        return type(attr, (), {})


for name in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers", "dotenv",
             "ghapi", "ghapi.core", "git", "tqdm", "requests", "bs4", "modal", "unidiff", "fastcore", "fastcore.net"]:
    sys.modules[name] = _Stub(name)
for name in ["swebench", "swebench.harness", "swebench.harness.log_parsers", "swebench.harness.test_spec"]:
    module = types.ModuleType(name)
    module.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = module

modules = [importlib.import_module("swebench.harness.log_parsers." + lang)
           for lang in ["python", "javascript", "java", "ruby", "go", "rust", "c", "php"]]


class Spec:
    def __init__(self, instance_id, version):
        self.instance_id, self.version = instance_id, version


out = []
for case in json.load(sys.stdin):
    fn = None
    for module in modules:
        fn = fn or getattr(module, "parse_log_" + case["parser"], None)
        fn = fn or getattr(module, "parse_" + case["parser"], None)  # parse_plotly_js
    if fn is None:
        out.append({"missing": True})
        continue
    try:
        # 5.0.2's maven and gradle parsers print warnings.
        with contextlib.redirect_stdout(sys.stderr):
            result = fn(case["log"], Spec(case.get("instance_id", ""), case.get("version", "")))
        out.append({"map": result})
    except Exception as e:  # the official harness writes no report then
        out.append({"error": type(e).__name__})
json.dump(out, sys.stdout)
