# Runs SWE-Gym's fork of the harness (SWE-Gym/SWE-Bench-Fork: SWE-bench
# 2.0.13's make_test_spec with its tables, get_eval_report with its
# MAP_REPO_TO_PARSER) on rows.jsonl and logs/, writing expected.json,
# expected/<instance_id>.eval.sh and specs.json (its table for the
# family's repositories). Each log is graded from
# <lower-cased instance id>/test_output.txt, where its run_evaluation puts
# it: get_logs_eval reads the repository, hence the parser, from that
# directory's name. Network, Docker and dataset modules are stubbed, and
# the environment files the image build would fetch are empty.
import json, os, shutil, sys, tempfile, types
root = sys.argv[1]
sys.path.insert(0, root)
for name in ["swebench", "swebench.harness"]:
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = m
for stub in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers",
             "dotenv", "ghapi", "ghapi.core", "git", "tqdm", "bs4", "fastcore", "fastcore.net", "requests"]:
    m = types.ModuleType(stub)
    m.__getattr__ = lambda attr: type(attr, (), {})
    sys.modules[stub] = m
sys.modules["dotenv"].load_dotenv = lambda *a, **k: None

import swebench.harness.test_spec as test_spec  # noqa: E402
from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS  # noqa: E402
from swebench.harness.grading import get_eval_report  # noqa: E402
test_spec.get_requirements = lambda inst: ""
test_spec.get_environment_yml = lambda inst, env: ""

GYM = ["python/mypy", "getmoto/moto", "conan-io/conan", "dask/dask", "project-monai/monai", "iterative/dvc",
       "bokeh/bokeh", "modin-project/modin", "spyder-ide/spyder", "hypothesisworks/hypothesis",
       "pydantic/pydantic", "pandas-dev/pandas", "facebookresearch/hydra"]
keys = ("test_cmd", "install", "python", "pre_install", "eval_commands")
json.dump({r: {v: {k: s.get(k) for k in keys} for v, s in MAP_REPO_VERSION_TO_SPECS[r].items()} for r in GYM},
          open("specs.json", "w"), indent=1, sort_keys=True)

os.makedirs("expected", exist_ok=True)
tmp = tempfile.mkdtemp()
out = {}
for line in open("rows.jsonl"):
    inst = json.loads(line)
    iid = inst["instance_id"]
    ts = test_spec.make_test_spec(inst)
    with open(os.path.join("expected", iid + ".eval.sh"), "w") as f:
        f.write(ts.eval_script)
    d = os.path.join(tmp, ts.instance_id)
    os.makedirs(d)
    shutil.copy(os.path.join("logs", iid + ".log"), os.path.join(d, "test_output.txt"))
    pred = {"instance_id": iid, "model_name_or_path": "m", "model_patch": "x"}
    image = "xingyaoww/" + ts.instance_image_key.replace("__", "_s_")
    try:
        rep = get_eval_report(ts, pred, os.path.join(d, "test_output.txt"), True)[iid]
    except IndexError as e:  # parse_log_pytest_pydantic on a line of one word
        out[iid] = {"image": image, "raises": type(e).__name__}
        continue
    out[iid] = {"image": image, "resolved": rep["resolved"],
                "patch_successfully_applied": rep["patch_successfully_applied"],
                "tests_status": {k: {s: sorted(v) for s, v in rep["tests_status"][k].items()}
                                 for k in ("FAIL_TO_PASS", "PASS_TO_PASS")} if "tests_status" in rep else None}
shutil.rmtree(tmp)
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True)
print(len(out), "rows")
