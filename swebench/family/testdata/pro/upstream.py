"""Runs SWE-bench Pro's harness code (swe_bench_pro_eval.py at the pinned
commit, archived into sys.argv[1]) on the fixtures: for each row, the image
(get_dockerhub_image_uri), the entry script (create_entryscript, reading
the fixture Dockerfiles as the harness reads its dockerfiles/), the
instance's parser.py run on the row's logs (as the harness runs it in the
container) giving output.json, and the verdict by main()'s rule. Its
network and cloud modules (modal, docker) are stubbed."""
import json, os, subprocess, sys, types

src = os.path.abspath(sys.argv[1])
for m in ("modal", "docker", "tqdm"):
    sys.modules[m] = types.ModuleType(m)
sys.modules["tqdm"].tqdm = lambda *a, **k: a[0] if a else None
pd = types.ModuleType("pandas")
sys.modules["pandas"] = pd
sys.path.insert(0, src)
import swe_bench_pro_eval as pro
from helper_code.image_uri import get_dockerhub_image_uri

here = os.getcwd()
expected = {}
for line in open("rows.jsonl"):
    r = json.loads(line)
    case, iid = r["_case"], r["instance_id"]
    e = {"image": get_dockerhub_image_uri(iid, "jefzda", r["repo"])}
    out = None
    try:
        # load_base_docker and instance_docker read dockerfiles/ from the cwd.
        e["entryscript"] = pro.create_entryscript(r)
        pro.load_local_script(os.path.join(src, "run_scripts"), iid, "run_script.sh")
        parser = pro.load_local_script(os.path.join(src, "run_scripts"), iid, "parser.py")
        ws = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pro-ws-" + case)
        os.makedirs(ws, exist_ok=True)
        open(os.path.join(ws, "parser.py"), "w").write(parser)
        subprocess.run([sys.executable, os.path.join(ws, "parser.py"), "logs/%s.stdout" % case,
                        "logs/%s.stderr" % case, os.path.join(ws, "output.json")], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            out = json.load(open(os.path.join(ws, "output.json")))
        except FileNotFoundError:
            out = None
    except FileNotFoundError as err:
        e["error"] = "FileNotFoundError"
    e["output"] = out
    if out is None:
        e["resolved"] = False
    else:
        passed_tests = {x["name"] for x in out["tests"] if x["status"] == "PASSED"}
        f2p = set(eval(r["fail_to_pass"]))
        p2p = set(eval(r["pass_to_pass"]))
        e["resolved"] = (f2p | p2p) <= passed_tests
    expected[case] = e
json.dump(expected, open("expected.json", "w"), indent=1, sort_keys=True)
print(sum(e["resolved"] for e in expected.values()), "of", len(expected), "resolved")
