# Runs SWE-bench-Live's own evaluation.py (run_instance and its
# default_pytest_parser) on rows.jsonl and logs/, writing expected.json.
# Network and container modules are stubbed; evaluate_instance is replaced
# by its last step, the parse of the print command's output.
import json, os, sys, types, tempfile
src = sys.argv[1]
for name in ["launch", "launch.core", "launch.core.runtime", "launch.scripts", "launch.scripts.parser", "datasets"]:
    sys.modules[name] = types.ModuleType(name)
sys.modules["launch.core.runtime"].SetupRuntime = object
sys.modules["launch.scripts.parser"].run_parser = None
sys.modules["datasets"].load_dataset = None
sys.path.insert(0, src)
import evaluation
out = {}
for line in open("rows.jsonl"):
    inst = json.loads(line)
    log = open("logs/" + inst["instance_id"] + ".log").read()
    evaluation.evaluate_instance = lambda *a, **k: evaluation.default_pytest_parser(log)
    inst["pred_patch"] = "x"
    with tempfile.TemporaryDirectory() as d:
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()):
            rep = evaluation.run_instance(inst, "linux", d, True)
    out[inst["instance_id"]] = {"resolved": rep["resolved"],
        "FAIL_TO_PASS": {k: sorted(v) for k, v in rep["FAIL_TO_PASS"].items()},
        "PASS_TO_PASS": {k: sorted(v) for k, v in rep["PASS_TO_PASS"].items()}}
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True)
print(len(out), "rows")
