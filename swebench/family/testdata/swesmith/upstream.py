# Runs SWE-smith's harness (swesmith.harness.eval.run_evaluation at the
# pinned commit, over SWE-bench's swebench package) on rows.jsonl with the
# engine faked: the container's git checkout and patch commands answer as
# logs/<id>.json says, /eval.sh "prints" the log's output. Writes
# expected.json: per row the commands the harness ran in the container,
# the eval.sh it wrote, the status map of its parser and the report.json
# it wrote (null when it wrote none); and profiles.json, every registered
# repository profile's name, commit, test command and image. Network, Docker and GitHub modules
# are stubbed.
#   python3 upstream.py SWESMITH_TREE SWEBENCH_TREE
import json, os, shutil, sys, tempfile, types

smith, sweb = sys.argv[1], sys.argv[2]
here = os.getcwd()
sys.path[:0] = [smith, sweb]
# swebench/__init__.py imports its dataset-collection tools; the harness
# modules are loaded without it.
for name in ["swebench", "swebench.harness"]:
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(sweb, *name.split("."))]
    sys.modules[name] = m
for stub in ["docker", "docker.errors", "docker.models", "docker.models.containers", "dotenv", "ghapi",
             "ghapi.all", "ghapi.core", "git", "tqdm", "datasets", "modal", "litellm", "bs4"]:
    m = types.ModuleType(stub)
    m.__getattr__ = lambda attr: type(attr, (), {})
    sys.modules[stub] = m
sys.modules["dotenv"].load_dotenv = lambda *a, **k: None
gen = types.ModuleType("swesmith.bug_gen.mirror.generate")
gen.INSTANCE_REF = "instance_ref"  # what the real module defines; it imports LLM clients
sys.modules["swesmith.bug_gen.mirror.generate"] = gen
requests = types.ModuleType("requests")
requests.get = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no network"))
sys.modules["requests"] = requests

import swesmith.harness.utils as hu  # noqa: E402
import swesmith.harness.eval as ev  # noqa: E402
from swesmith.harness.grading import read_test_output  # noqa: E402
from swesmith.harness.log_parsers import MAP_REPO_TO_PARSER, parse_log_pytest  # noqa: E402


class Result:
    def __init__(self, code, out=b""):
        self.exit_code, self.output = code, out


class Container:
    def __init__(self, case):
        self.case, self.calls = case, []

    def start(self):
        pass

    def exec_run(self, cmd, workdir=None, user=None):
        self.calls.append({"cmd": cmd, "workdir": workdir, "user": user})
        for prefix in self.case["fail"]:
            if cmd.startswith(prefix + " ") or cmd == prefix:
                return Result(1, b"error: failed\n")
        return Result(0, b"ok\n")


class Client:
    def __init__(self):
        self.containers = self

    def create(self, **kw):
        self.created = kw
        return current["container"]


current = {}
hu.docker.from_env = lambda: current["client"]
hu.copy_to_container = lambda c, src, dst: current.setdefault("copied", {}).__setitem__(str(dst), open(src).read())
hu.cleanup_container = lambda *a, **k: None


def exec_run_with_timeout(container, cmd, timeout=None):
    container.calls.append({"cmd": cmd, "workdir": None, "user": None})
    return current["case"]["output"], current["case"]["timed_out"], 1.0


hu.exec_run_with_timeout = exec_run_with_timeout

rows = [json.loads(line) for line in open("rows.jsonl")]
out = {}
work = tempfile.mkdtemp()
os.chdir(work)
try:
    for inst in rows:
        iid = inst["instance_id"]
        case = json.load(open(os.path.join(here, "logs", iid + ".json")))
        current.clear()
        current.update(case=case, container=Container(case), client=Client())
        pred = {"instance_id": iid, "model_patch": inst["patch"], "model_name_or_path": "m"}
        error = None
        try:
            ev.run_evaluation(pred, inst, "r", is_gold=case["gold"], timeout=120)
        except ValueError as e:  # read_test_output: markers out of order
            error = str(e)
        d = os.path.join("logs", "run_evaluation", "r", iid)
        rep = None
        if os.path.exists(os.path.join(d, "report.json")):
            rep = json.load(open(os.path.join(d, "report.json")))
        text, found = None, False
        if error is None and os.path.exists(os.path.join(d, "test_output.txt")):
            text, found = read_test_output(os.path.join(d, "test_output.txt"))
        repo = iid.split(".")[0].replace("__", "/")
        parsed = MAP_REPO_TO_PARSER.get(repo, parse_log_pytest)(text) if found else None
        out[iid] = {"image": current["client"].created["image"], "calls": current["container"].calls,
                    "eval_sh": current.get("copied", {}).get("/eval.sh"), "parsed": parsed, "report": rep,
                    "error": error}
finally:
    os.chdir(here)
    shutil.rmtree(work)
profiles = {}
for p in hu.global_registry.values():
    profiles[p.repo_name] = {"owner": p.owner, "repo": p.repo, "commit": p.commit, "test_cmd": p.test_cmd,
                             "min_testing": p.min_testing, "image_name": p.image_name, "mirror": p.mirror_name}
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True)
json.dump(profiles, open("profiles.json", "w"), indent=1, sort_keys=True)
print(len(out), "rows")
