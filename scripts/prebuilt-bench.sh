#!/usr/bin/env bash
# Measures prebuilt mode's sandbox start: `eval --namespace swebox-bench` on
# stand-in instance images named as the official harness names them
# (swebox-bench/sweb.eval.x86_64.<id, __ as _1776_>:latest), generated here
# from the test image: BENCH_BIG instances whose /testbed is django-sized
# (BENCH_FILES files of BENCH_KIB KiB, committed to git) and BENCH_SMALL
# small ones, each graded with its gold patch. Every EVAL binary given runs
# the same instances with the same workers; for each the script prints the
# run's wall time and, per instance, create -> started from
# run_instance.log ("Creating container" to "Container ... started").
#
#   scripts/prebuilt-bench.sh OUT_DIR EVAL [EVAL...]
#
# Environment: BENCH_BIG (2), BENCH_SMALL (8), BENCH_FILES (6000), BENCH_KIB
# (16), BENCH_WORKERS (2), SWEBOX_TEST_IMAGE (swebox/python:bookworm);
# BENCH_EVAL_FLAGS, more flags for every eval (e.g. "--kubeconfig FILE");
# BENCH_IMPORT, a command run with the instance images' names before the
# runs (e.g. "scripts/k8s-local.sh import" for the test cluster's nodes);
# OFFICIAL_SWEBENCH, OFFICIAL_PYTHON, OFFICIAL_EXTRA_PATH for the official
# harness's run (scripts/official-harness-v4.py).
# Images carry the label swebox.bench=prebuilt; the script removes them when
# it ends.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 OUT_DIR EVAL [EVAL...]" >&2; exit 2; }
out=$(realpath -m "$1")
shift
big=${BENCH_BIG:-2} small=${BENCH_SMALL:-8} files=${BENCH_FILES:-6000} kib=${BENCH_KIB:-16}
workers=${BENCH_WORKERS:-2} image=${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}
rm -rf "$out"
mkdir -p "$out"
cleanup() { docker image ls -q --filter label=swebox.bench=prebuilt | sort -u | xargs -r docker image rm -f >/dev/null 2>&1 || true; }
trap cleanup EXIT

# One repository per size: a package whose f() is wrong at base_commit,
# its tests, and (big) generated modules; the dataset rows and predictions.
python3 - "$out" "$big" "$small" "$files" "$kib" <<'EOF'
import json, os, subprocess, sys
out, big, small, files, kib = sys.argv[1], *map(int, sys.argv[2:])
env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@swebox.invalid",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@swebox.invalid",
           GIT_AUTHOR_DATE="2024-01-02T03:04:05Z", GIT_COMMITTER_DATE="2024-01-02T03:04:05Z")
def git(d, *a):
    return subprocess.run(["git", "-C", d, *a], env=env, check=True, capture_output=True, text=True).stdout
test_patch = """diff --git a/tests/test_fix.py b/tests/test_fix.py
new file mode 100644
--- /dev/null
+++ b/tests/test_fix.py
@@ -0,0 +1,5 @@
+from pkg.core import f
+
+
+def test_f():
+    assert f() == 2
"""
gold = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,2 @@
 def f():
-    return 1
+    return 2
"""
rows, preds, overrides = [], [], {}
for size, count, nfiles in (("big", big, files), ("small", small, 0)):
    if count == 0:
        continue
    d = os.path.join(out, size, "testbed")
    os.makedirs(os.path.join(d, "pkg", "gen"))
    os.makedirs(os.path.join(d, "tests"))
    open(os.path.join(d, "pkg", "__init__.py"), "w").close()
    open(os.path.join(d, "conftest.py"), "w").close()  # puts /testbed on sys.path
    open(os.path.join(d, "pkg", "core.py"), "w").write("def f():\n    return 1\n")
    line = "# generated module of the django-sized stand-in repository\n"
    body = line * (kib * 1024 // len(line))
    for i in range(nfiles):
        open(os.path.join(d, "pkg", "gen", f"m{i:05d}.py"), "w").write(body)
    git(d, "init", "-q")
    git(d, "add", "-A")
    git(d, "commit", "-q", "-m", "the generated tree")
    # base_commit is a small commit, as a real one is: the eval script's
    # git show prints it.
    open(os.path.join(d, "README"), "w").write("stand-in repository\n")
    git(d, "add", "README")
    git(d, "commit", "-q", "-m", "base")
    base = git(d, "rev-parse", "HEAD").strip()
    repo = f"bench/{size}"
    overrides[repo] = {"test_cmd": "pytest -rA", "install": ""}
    for k in range(1, count + 1):
        iid = f"bench__{size}-{k}"
        rows.append({"repo": repo, "instance_id": iid, "base_commit": base, "version": "1.0",
                     "patch": gold, "test_patch": test_patch,
                     "FAIL_TO_PASS": json.dumps(["tests/test_fix.py::test_f"]),
                     "PASS_TO_PASS": json.dumps([])})
        preds.append({"instance_id": iid, "model_name_or_path": "gold", "model_patch": gold})
with open(os.path.join(out, "dataset.jsonl"), "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
with open(os.path.join(out, "preds.jsonl"), "w") as f:
    f.writelines(json.dumps(p) + "\n" for p in preds)
json.dump(overrides, open(os.path.join(out, "overrides.json"), "w"))
# The same repositories as entries of the official harness's tables.
json.dump({repo: {"1.0": {"python": "3.11", "test_cmd": o["test_cmd"]}} for repo, o in overrides.items()},
          open(os.path.join(out, "specs.json"), "w"))
EOF

for size in big small; do
  [ -d "$out/$size" ] || continue
  printf 'FROM %s\nCOPY testbed /testbed\nWORKDIR /testbed\n' "$image" >"$out/$size/Dockerfile"
  docker build -q --network none --label swebox.bench=prebuilt -t "swebox-bench/$size:bench" "$out/$size" >/dev/null
  du -sh "$out/$size/testbed" | sed "s|$out/||; s|^|bench: /testbed of |" >&2
done
for id in $(python3 -c 'import json,sys; [print(json.loads(l)["instance_id"]) for l in open(sys.argv[1])]' "$out/dataset.jsonl"); do
  size=${id#bench__}
  docker tag "swebox-bench/${size%-*}:bench" "swebox-bench/sweb.eval.x86_64.${id/__/_1776_}:latest"
done

# report NAME LOGROOT START END prints the wall time and each instance's
# create -> started (both harnesses write the same two lines).
report() {
  python3 - "$@" <<'EOF'
import datetime, glob, os, statistics, sys
name, root, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
def ts(line):
    return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
rows = []
for log in sorted(glob.glob(os.path.join(root, "*", "*", "run_instance.log"))):
    created = started = None
    for line in open(log):
        if " - Error: " in line or "Traceback" in line:
            sys.exit(f"{log}: {line.strip()}")
        if " - Creating container for " in line:
            created = ts(line)
        elif " - Container for " in line and " started: " in line:
            started = ts(line)
    rows.append((os.path.basename(os.path.dirname(log)), (started - created).total_seconds()))
print(f"{name}: wall {end - start:.1f} s")
for iid, s in rows:
    print(f"  {iid}: create -> started {s:.2f} s")
for size in ("big", "small"):
    xs = [s for iid, s in rows if f"__{size}-" in iid]
    if xs:
        print(f"  {size}: median create -> started {statistics.median(xs):.2f} s of {len(xs)}")
EOF
}

if [ -n "${OFFICIAL_SWEBENCH:-}" ]; then
  here=$(dirname "$(realpath "$0")")
  mkdir -p "$out/official"
  start=$(date +%s.%N)
  (cd "$out/official" && "${OFFICIAL_PYTHON:-python3}" "$here/official-harness-v4.py" "$OFFICIAL_SWEBENCH" "$out/specs.json" -- \
    --dataset_name "$out/dataset.jsonl" --predictions_path "$out/preds.jsonl" --max_workers "$workers" \
    --run_id official --namespace swebox-bench --report_dir "$out/official") >"$out/official.out" 2>&1 ||
    { tail -20 "$out/official.out" >&2; exit 1; }
  end=$(date +%s.%N)
  report "official harness v4.1.0" "$out/official/logs/run_evaluation/official" "$start" "$end"
  grep -h '"resolved_instances"' "$out/official"/*.official.json >&2 || true
fi

if [ -n "${BENCH_IMPORT:-}" ]; then
  # shellcheck disable=SC2086 # a command with its arguments
  $BENCH_IMPORT $(docker image ls --format '{{.Repository}}:{{.Tag}}' 'swebox-bench/sweb.eval.x86_64.*') >&2
fi

n=0
for eval in "$@"; do
  n=$((n + 1))
  start=$(date +%s.%N)
  "$eval" --dataset_name "$out/dataset.jsonl" --predictions_path "$out/preds.jsonl" \
    --namespace swebox-bench --spec_overrides "$out/overrides.json" \
    --max_workers "$workers" --start_ahead -1 --run_id "bench-$n" \
    --log_dir "$out/logs" --report_dir "$out/reports-$n" ${BENCH_EVAL_FLAGS:-} >"$out/eval-$n.out" 2>"$out/eval-$n.err" ||
    { tail -20 "$out/eval-$n.err" >&2; exit 1; }
  end=$(date +%s.%N)
  report "$eval" "$out/logs/run_evaluation/bench-$n" "$start" "$end"
  grep -h "resolved" "$out/eval-$n.out" | tail -3 >&2 || true
done
