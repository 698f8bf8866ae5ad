# Runs SWE-PolyBench's own code (amazon-science/SWE-PolyBench at the
# pinned commit) on rows.jsonl and logs/: the row's parser class from
# REPO_TO_PARSER_CLASS on the run log, instance_level_scoring on its
# result with the row's F2P and P2P (ast.literal_eval, as
# dataset_generator reads them), and DockerManager.try_pull_prebuilt_image
# for the image name (against a fake Docker client that records the pull).
# Writes expected.json. docker, pandas, datasets, loguru and pydantic are
# stubbed: nothing here reaches a network or an engine.
import ast, importlib, json, os, sys, types
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "src"))
# The package's __init__ imports the repository and metrics modules
# (GitPython, tree-sitter): the package is set up without it.
pkg = types.ModuleType("poly_bench_evaluation")
pkg.__path__ = [os.path.join(root, "src", "poly_bench_evaluation")]
sys.modules["poly_bench_evaluation"] = pkg
for stub in ["docker", "docker.errors", "pandas", "datasets", "loguru", "pydantic"]:
    m = types.ModuleType(stub)
    m.__getattr__ = lambda attr: type(attr, (Exception,), {})
    sys.modules[stub] = m
sys.modules["docker"].errors = sys.modules["docker.errors"]
sys.modules["loguru"].logger = types.SimpleNamespace(info=lambda *a, **k: None, debug=lambda *a, **k: None)
sys.modules["pydantic"].BaseModel = object
sys.modules["pydantic"].ConfigDict = lambda **k: None

from poly_bench_evaluation.constants import REPO_TO_PARSER_CLASS  # noqa: E402
from poly_bench_evaluation.docker_utils import DockerManager  # noqa: E402
from poly_bench_evaluation.scoring import instance_level_scoring  # noqa: E402
parsers = importlib.import_module("poly_bench_evaluation.parsers")


class Images:
    def pull(self, name):
        self.pulled = name
        raise sys.modules["docker.errors"].ImageNotFound(name)


out = {}
for line in open("rows.jsonl"):
    row = json.loads(line)
    iid = row["instance_id"]
    client = types.SimpleNamespace(images=Images())
    DockerManager(image_id="polybench_x", delete_image=False, client=client).try_pull_prebuilt_image(iid)
    with open(os.path.join("logs", iid + ".log")) as f:
        log = f.read()
    result = getattr(parsers, REPO_TO_PARSER_CLASS[row["repo"]])(test_content=log).parse()
    o = instance_level_scoring(instance_id=iid, result=result, f2p=ast.literal_eval(row["F2P"]),
                               p2p=ast.literal_eval(row["P2P"]), patch_applied=True, generation=True)
    out[iid] = {"image": client.images.pulled, "parser": REPO_TO_PARSER_CLASS[row["repo"]],
                "with_logs": o.with_logs, "all_f2p_passed": o.all_f2p_passed, "no_p2p_failed": o.no_p2p_failed,
                "resolved": o.resolved, "passed_tests": o.passed_tests, "failed_tests": o.failed_tests}
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True)
print(len(out), "rows,", sum(o["resolved"] for o in out.values()), "resolved")
