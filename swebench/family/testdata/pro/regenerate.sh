#!/bin/sh
# Regenerates rows.jsonl, logs/, dockerfiles/ and expected.json: the
# fixtures (rows.py), then SWE-bench Pro's own harness code at the pinned
# commit on them (upstream.py: create_entryscript, get_dockerhub_image_uri,
# each instance's parser.py on its logs, main()'s resolution rule).
#   PRO_GIT=/path/to/SWE-bench_Pro-os/.git sh regenerate.sh
# (a clone or bare mirror of https://github.com/scaleapi/SWE-bench_Pro-os).
set -eu
COMMIT=ca10a60a5fcae51e6948ffe1485d4153d421e6c5
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 rows.py
ids=$(python3 -c 'import json; [print("run_scripts/" + json.loads(l)["instance_id"]) for l in open("rows.jsonl") if json.loads(l).get("_upstream_files", True)]')
git --git-dir="${PRO_GIT:?set PRO_GIT}" archive "$COMMIT" swe_bench_pro_eval.py helper_code/image_uri.py $ids | tar -x -C "$tmp"
python3 upstream.py "$tmp"
