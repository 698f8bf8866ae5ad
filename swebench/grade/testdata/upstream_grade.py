"""Grades logs with the official harness's own get_eval_report, from a
checkout of SWE-bench/SWE-bench given as argv[1], for upstream_test.go.

Reads a JSON list of {"instance_id", "repo", "version", "log_parser",
"eval_type", "FAIL_TO_PASS", "PASS_TO_PASS", "model_patch", "log"} on stdin
and writes, for each, json.dumps(report, indent=4) or "error: <Exception>".
The harness's heavy imports (docker, datasets, ...) are stubbed.
"""
import contextlib
import json
import os
import sys
import tempfile
import types

root = sys.argv[1]
sys.path.insert(0, root)


class _Stub(types.ModuleType):
    def __getattr__(self, attr):
        return type(attr, (), {})


for name in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers", "dotenv",
             "ghapi", "ghapi.core", "git", "tqdm", "requests", "bs4", "modal", "fastcore", "fastcore.net"]:
    sys.modules[name] = _Stub(name)
try:
    import unidiff  # noqa: F401  (only eval-script code uses it)
except ImportError:
    sys.modules["unidiff"] = _Stub("unidiff")
for name in ["swebench", "swebench.harness"]:
    module = types.ModuleType(name)
    module.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = module

from swebench.harness.grading import get_eval_report  # noqa: E402

out = []
with tempfile.TemporaryDirectory() as tmp:
    for i, case in enumerate(json.load(sys.stdin)):
        path = os.path.join(tmp, f"{i}.txt")
        with open(path, "w") as f:
            f.write(case["log"])
        spec = types.SimpleNamespace(**{k: v for k, v in case.items() if k not in ("log", "model_patch")})
        pred = {"instance_id": case["instance_id"], "model_patch": case["model_patch"], "model_name_or_path": "m"}
        try:
            with contextlib.redirect_stdout(sys.stderr):
                report = get_eval_report(spec, pred, path, include_tests_status=True)
            out.append(json.dumps(report, indent=4))
        except Exception as e:  # the official harness writes no report then
            out.append("error: " + type(e).__name__)
json.dump(out, sys.stdout)
