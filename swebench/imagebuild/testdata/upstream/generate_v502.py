"""Regenerates testdata/golden/v502/taskrepo.json: what SWE-bench 5.0.2's
own code does with the task repository testdata/taskrepo, so that the Go
test (upstream_v502_test.go) can compare swebench/taskrepo and
imagebuild's task images with it.

  git -C SWE-bench archive 490635b swebench | tar -x -C /tmp/sweb502   # tag Release 5.0.2
  python3 swebench/imagebuild/testdata/upstream/generate_v502.py /tmp/sweb502

It runs, with the network-only imports stubbed and a stand-in Docker
client (no image exists, a pull of an image named in PUBLISHED succeeds):
  - swebench.task.checks.check_task_repo (the guard of `images build`);
  - swebench.task.repo.select_tasks and run_evaluation.load_instances;
  - swebench.image_builder.prepare_images.main with dry_run=True, the body
    of `swebench images build <task-repo> --dry-run`, recording the files
    it writes under logs/image_builder/ and the ImageSpecs it builds;
  - ImageSpec for arch="arm64";
  - run_evaluation._build_before_eval, recording the ImageSpecs it builds
    and, for images the build did not produce, the pulls it falls back to.
Needs PyYAML (Debian python3-yaml).
"""
import json
import os
import shutil
import sys
import tempfile
import types

root = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.normpath(os.path.join(here, "..", "taskrepo"))
out_path = os.path.normpath(os.path.join(here, "..", "golden", "v502", "taskrepo.json"))
sys.path.insert(0, root)
# The packages' __init__ files import everything (Modal, datasets); only
# the modules below are loaded.
for name in ["swebench", "swebench.harness", "swebench.image_builder", "swebench.task"]:
    module = types.ModuleType(name)
    module.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = module


class _Any(type):
    def __getattr__(cls, attr):
        return type(attr, (), {})


for stub in ["datasets", "docker", "docker.errors", "docker.models", "docker.models.containers",
             "dotenv", "ghapi", "ghapi.core", "git", "tqdm", "requests", "bs4", "fastcore",
             "fastcore.net", "modal", "unidiff", "pyarrow", "pyarrow.parquet", "pandas",
             "huggingface_hub", "typer", "swebench.harness.modal_eval", "rich", "rich.console", "rich.table", "rich.progress"]:
    module = types.ModuleType(stub)
    module.__getattr__ = lambda attr: type(attr, (Exception,), {})
    sys.modules[stub] = module
sys.modules["dotenv"].load_dotenv = lambda *a, **k: None


class _Bar:
    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __getattr__(self, attr):
        return lambda *a, **k: None


sys.modules["tqdm"].tqdm = _Bar


class ImageNotFound(Exception):
    pass


sys.modules["docker.errors"].ImageNotFound = ImageNotFound
sys.modules["docker"].errors = sys.modules["docker.errors"]

PUBLISHED = set()


class _Images:
    def __init__(self):
        self.pulls = []

    def list(self, all=False):
        return []

    def get(self, name):
        raise ImageNotFound(name)

    def pull(self, name):
        self.pulls.append(name)
        if name not in PUBLISHED:
            raise ImageNotFound(name)


class _Client:
    def __init__(self):
        self.images = _Images()


sys.modules["docker"].from_env = lambda *a, **k: _Client()
sys.modules["docker"].DockerClient = _Client

import swebench.task.checks as checks  # noqa: E402
import swebench.task.repo as taskrepo  # noqa: E402
import swebench.image_builder.prepare_images as prep  # noqa: E402
import swebench.image_builder.docker_build as docker_build  # noqa: E402
from swebench.image_builder.image_spec import ImageSpec  # noqa: E402
import swebench.harness.run_evaluation as run_eval  # noqa: E402

golden = {"repo": "testdata/taskrepo"}
golden["check"] = [str(p) for p in checks.check_task_repo(repo)]


def ids(tasks):
    return [t["instance_id"] for t in tasks]


golden["select"] = {
    "all": ids(taskrepo.select_tasks(repo)),
    "dataset swebox/Demo_Lite": ids(taskrepo.select_tasks(repo, None, ["swebox/Demo_Lite"])),
    "ids swebox__demo-3 swebox__demo-1": ids(taskrepo.select_tasks(repo, ["swebox__demo-3", "swebox__demo-1"])),
}
golden["load_instances"] = {s: ids(run_eval.load_instances("x", s, None, repo)) for s in ["test", "dev", "deprecated"]}
golden["rows"] = {t["instance_id"]: t for t in taskrepo.load_task_repo(repo)}


def spec_record(s):
    ctx = s.context_dir
    if ctx is not None:
        ctx = os.path.relpath(ctx, repo)
    return {"instance_id": s.instance_id, "name": s.name, "platform": s.platform, "arch": s.arch,
            "filesafe_name": s.filesafe_name, "dockerfile": s.dockerfile, "context_dir": ctx}


def dry_run(namespace, tag, instance_ids=None, datasets=None):
    work = tempfile.mkdtemp()
    cwd = os.getcwd()
    os.chdir(work)
    built = []
    orig = docker_build.build_instance_images

    def record(client, image_specs, force_rebuild=False, max_workers=4, dry_run=False):
        built.extend(spec_record(s) for s in image_specs)
        return orig(client=client, image_specs=image_specs, force_rebuild=force_rebuild,
                    max_workers=0, dry_run=dry_run)

    prep.build_instance_images = record
    try:
        prep.main(task_repo=repo, instance_ids=instance_ids, datasets=datasets, max_workers=1,
                  force_rebuild=False, open_file_limit=1024, namespace=namespace, tag=tag, dry_run=True)
    finally:
        prep.build_instance_images = orig
        os.chdir(cwd)
    files = {}
    for dirpath, _, names in os.walk(os.path.join(work, "logs")):
        for n in names:
            if n == "build_image.log":
                continue  # timestamps; the Go test checks the layout only
            p = os.path.join(dirpath, n)
            with open(p, newline="") as f:
                files[os.path.relpath(p, work)] = f.read()
    logs = sorted(os.path.relpath(os.path.join(d, n), work) for d, _, ns in os.walk(os.path.join(work, "logs"))
                  for n in ns if n == "build_image.log")
    shutil.rmtree(work)
    return {"namespace": namespace, "tag": tag, "instance_ids": instance_ids, "datasets": datasets,
            "specs": built, "files": files, "logs": logs}


golden["images_build"] = [
    dry_run(None, "latest"),
    dry_run("registry.local:5000/team", "v1"),
    dry_run(None, "latest", instance_ids=["swebox__demo-3"]),
    dry_run(None, "latest", datasets=["swebox/Demo_Lite"]),
]
golden["arm64"] = [spec_record(ImageSpec(instance_id=i, dockerfile="FROM x\n", namespace=ns, arch="arm64"))
                   for i in ["swebox__demo-1", "Owner__Mixed-Case-2"] for ns in [None, "swebench"]]


def before_eval(rows, published):
    PUBLISHED.clear()
    PUBLISHED.update(published)
    built = []

    def record(client, image_specs, force_rebuild=False, max_workers=4, dry_run=False):
        built.append({"force_rebuild": force_rebuild, "max_workers": max_workers,
                      "specs": [spec_record(s) for s in image_specs]})

    orig = docker_build.build_instance_images
    docker_build.build_instance_images = record
    client = _Client()
    try:
        run_eval._build_before_eval(rows, "x", "test", repo, 3, client)
    finally:
        docker_build.build_instance_images = orig
    return {"rows": [{"instance_id": r["instance_id"], "image": r["image"]} for r in rows],
            "published": sorted(published), "builds": built, "pulls": client.images.pulls}


test_rows = run_eval.load_instances("x", "test", None, repo)
moved = [dict(r, image=r["image"].replace("swebench/", "127.0.0.1:5000/swebench/").replace(":latest", ":v2"))
         for r in test_rows]
golden["build_before_eval"] = [
    before_eval(test_rows, [test_rows[0]["image"]]),
    before_eval(moved, []),
]

os.makedirs(os.path.dirname(out_path), exist_ok=True)
with open(out_path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True, ensure_ascii=False)
    f.write("\n")
print("wrote", out_path)
