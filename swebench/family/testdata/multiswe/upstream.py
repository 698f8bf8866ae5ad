# Runs Multi-SWE-bench's own harness code (multi_swe_bench/harness at the
# pinned commit, extracted to argv[1]) on rows.jsonl and logs/: each ported
# instance class's parse_log and fix-run.sh, then gen_report's evaluation
# (ReportTask.generate_report, Report.check, the f2p/p2p/s2p/n2p membership
# of gen_eval_reports, FinalReport.from_reports), and how run_instance
# runs each row (fix_patch_run, fix_patch_path, the Dockerfiles' WORKDIR,
# USER and the files copied to /home/). dataclasses_json, tqdm,
# unidiff and docker are stubbed (no network, no containers); only the
# classes' own modules are loaded, not the package's import-everything
# __init__ files. Writes expected.json.
import importlib.util, json, logging, os, shutil, sys, tempfile, types

src = sys.argv[1]
def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m

def dataclass_json(cls):
    cls.to_json = lambda self, **k: "{}"
    return cls
stub("dataclasses_json", dataclass_json=dataclass_json, config=lambda **k: {})
stub("tqdm", tqdm=lambda it=None, **k: it)
stub("unidiff", PatchSet=None)
stub("docker", from_env=lambda: None)
for pkg in ["multi_swe_bench", "multi_swe_bench.harness", "multi_swe_bench.utils"]:
    m = stub(pkg)
    m.__path__ = [os.path.join(src, *pkg.split("."))]
stub("multi_swe_bench.utils.args_util", ArgumentParser=object)
stub("multi_swe_bench.utils.logger", setup_logger=None)

from multi_swe_bench.harness import gen_report, report, test_result
classes = {"alibaba/fastjson2": "java/alibaba/fastjson2", "cli/cli": "golang/cli/cli", "tokio-rs/bytes": "rust/tokio_rs/bytes",
           "jqlang/jq": "c/jqlang/jq", "fmtlib/fmt": "cpp/fmtlib/fmt", "vuejs/core": "typescript/vuejs/core",
           "iamkun/dayjs": "javascript/iamkun/dayjs"}
for name, path in classes.items():
    spec = importlib.util.spec_from_file_location("msb_" + path.replace("/", "_"),
                                                  os.path.join(src, "multi_swe_bench/harness/repos", path + ".py"))
    spec.loader.exec_module(importlib.util.module_from_spec(spec))

class Log(logging.Handler):
    msgs = []
    def emit(self, record): self.msgs.append(record.getMessage())
logger = logging.getLogger("msb"); logger.addHandler(Log()); logger.propagate = False
logging.getLogger().addHandler(Log()); logging.getLogger().setLevel(logging.ERROR)

def tr(d):
    return test_result.TestResult(passed_count=d["passed_count"], failed_count=d["failed_count"], skipped_count=d["skipped_count"],
        passed_tests=set(d["passed_tests"]), failed_tests=set(d["failed_tests"]), skipped_tests=set(d["skipped_tests"]))

reasons = [("After applying the fix patch, no test results", "no-test-results"), ("Before applying the fix patch, the test passed", "new-failure"),
           ("no test cases transitioned", "nothing-fixed"), ("an anomalous pattern", "anomalous")]
out = {}
work = tempfile.mkdtemp()
try:
    for line in open("rows.jsonl", encoding="utf-8"):
        r = json.loads(line)
        iid = f'{r["org"]}__{r["repo"]}-{r["number"]}'
        d = os.path.join(work, iid)
        os.makedirs(d)
        if os.path.exists(f"logs/{iid}.log"):
            shutil.copy(f"logs/{iid}.log", os.path.join(d, "fix-patch-run.log"))
        ds = types.SimpleNamespace(run_result=tr(r["run_result"]), test_patch_result=tr(r["test_patch_result"]),
                                   **{k: r[k] for k in ["f2p_tests", "p2p_tests", "s2p_tests", "n2p_tests"]})
        task = report.ReportTask(r["org"], r["repo"], r["number"], __import__("pathlib").Path(d))
        Log.msgs.clear()
        self = types.SimpleNamespace(max_workers=1, regen=True, logger=logger, dataset={task.id: ds})
        good, bad, failed = gen_report.CliArgs.gen_eval_reports(self, [task])
        final = report.FinalReport.from_reports(good, bad, failed)
        e = {"verdict": "resolved" if final.resolved_ids else "unresolved" if final.unresolved_ids else "error"}
        rep = (good + bad)[0] if good + bad else None
        if rep is not None:
            e["reason"] = ""
            for prefix, code in reasons:
                if rep.error_msg and prefix in rep.error_msg:
                    e["reason"] = code
            for kind in ["p2p", "f2p", "s2p", "n2p"]:
                if any(m.startswith(f"Invalid {kind}_tests") for m in Log.msgs) and not e["reason"]:
                    e["reason"] = "missing-" + kind
            e["fix"] = {k: sorted(getattr(rep.fix_patch_result, k + "_tests")) for k in ["passed", "failed", "skipped"]}
            e["report"] = {k: sorted(getattr(rep, k + "_tests")) for k in ["fixed", "f2p", "p2p", "s2p", "n2p"]}
        # The fix-run.sh the class's instance image holds, for this row.
        pr = types.SimpleNamespace(org=r["org"], repo=r["repo"], number=r["number"], base=types.SimpleNamespace(**r["base"]),
                                   fix_patch=r["fix_patch"], test_patch=r["test_patch"])
        img = task.instance.dependency()
        img._pr = pr
        e["fix_run"] = {f.name: f.content for f in img.files()}["fix-run.sh"]
        e["image"] = img.image_full_name()
        # How run_instance runs it: the command, where the prediction's
        # patch is mounted, and the image's working directory, user and
        # the files its Dockerfile copies to /home/.
        e["command"] = task.instance.fix_patch_run()
        e["patch_path"] = img.fix_patch_path()
        base = img.dependency()
        base._pr = pr
        lines = [l.strip() for l in (base.dockerfile() + "\n" + img.dockerfile()).splitlines()]
        e["workdir"] = [l.split(None, 1)[1] for l in lines if l.startswith("WORKDIR ")][-1]
        e["user"] = ([l.split(None, 1)[1] for l in lines if l.startswith("USER ")] or [""])[-1]
        e["home_files"] = sorted(l.split()[1] for l in lines if l.startswith("COPY ") and l.split()[-1] == "/home/")
        out[iid] = e
finally:
    shutil.rmtree(work)
json.dump(out, open("expected.json", "w"), indent=1, sort_keys=True, ensure_ascii=False)
print(len(out), "rows:", sum(v["verdict"] == "resolved" for v in out.values()), "resolved,",
      sum(v["verdict"] == "error" for v in out.values()), "errors")
