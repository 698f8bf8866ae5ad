# Runs SWE-rebench's fork of the harness (SWE-rebench/SWE-bench-fork, its
# own load-time clean-up _clean_install_config, make_test_spec and
# get_eval_report) on rows.jsonl and logs/, writing expected.json and
# expected/<instance_id>.eval.sh. Network, Docker and dataset modules are
# stubbed: requests.get answers 404, so no requirements file is fetched.
import json, os, sys, types
root = sys.argv[1]
sys.path.insert(0, root)
for name in ["swebench", "swebench.harness"]:
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = m
for stub in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers",
             "dotenv", "ghapi", "ghapi.core", "git", "tqdm", "bs4", "fastcore", "fastcore.net", "modal"]:
    m = types.ModuleType(stub)
    m.__getattr__ = lambda attr: type(attr, (), {})
    sys.modules[stub] = m
requests = types.ModuleType("requests")
requests.get = lambda *a, **k: types.SimpleNamespace(status_code=404, text="")
sys.modules["requests"] = requests

from swebench.harness.utils import _clean_install_config  # noqa: E402
from swebench.harness.test_spec.test_spec import make_test_spec  # noqa: E402
from swebench.harness.grading import get_eval_report  # noqa: E402

os.makedirs("expected", exist_ok=True)
out = {}
for line in open("rows.jsonl"):
    inst = _clean_install_config(json.loads(line))
    iid = inst["instance_id"]
    ts = make_test_spec(inst, namespace="swerebench")
    with open(os.path.join("expected", iid + ".eval.sh"), "w") as f:
        f.write(ts.eval_script)
    pred = {"instance_id": iid, "model_name_or_path": "m", "model_patch": "x"}
    rep = get_eval_report(ts, pred, os.path.join("logs", iid + ".log"), True)[iid]
    out[iid] = {"image": ts.instance_image_key, "resolved": rep["resolved"],
                "patch_successfully_applied": rep["patch_successfully_applied"],
                "tests_status": {k: {s: sorted(v) for s, v in rep["tests_status"][k].items()}
                                 for k in ("FAIL_TO_PASS", "PASS_TO_PASS")} if "tests_status" in rep else None}
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True)
print(len(out), "rows")
