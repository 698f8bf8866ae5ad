#!/usr/bin/env bash
# Regenerates the Maven captures of testdata/java with the host's Maven
# (Debian bookworm: maven 3.8.7, OpenJDK 17) and Debian's offline Maven
# repository (apt-get install libsurefire-java junit4
# libmaven-compiler-plugin-java libmaven-resources-plugin-java):
#
#   swebench/logparse/testdata/java/capture.sh
#   go test ./swebench/logparse/ -run TestReleaseDifferences -update
#
# The three test commands run one by one under `set -x`, as the official
# eval scripts for google/gson and apache/druid run them. The harness reads
# the traced commands (stderr) and Maven's output (stdout) from one stream,
# and where the two are delivered out of order the names and the BUILD
# lines separate; that is the case 5.0.2's first-in-first-out pairing
# handles. maven_streams_trace_first.log and maven_streams_output_first.log
# are the same run's two streams concatenated in either order.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -rL /usr/share/maven-repo/. "$work/m2/"
mkdir -p "$work/project" && cp -r "$here/suites/maven/." "$work/project/"
cat > "$work/eval.sh" <<SCRIPT
set -uxo pipefail
cd $work/project
mvn test -o -B -Dmaven.repo.local=$work/m2 -Dtest=demo.ParserTest#parsesNumbers
mvn test -o -B -Dmaven.repo.local=$work/m2 -Dtest=demo.ParserTest#rejectsSigns
mvn test -o -B -Dmaven.repo.local=$work/m2 -Dtest=demo.ParserTest#parsesHex
SCRIPT
normalise() { sed -e "s#$work#/testbed#g" -e 's/Time elapsed: [0-9.]* s/Time elapsed: 0.1 s/' \
  -e 's/Total time:  .*/Total time:  1.000 s/' -e 's/Finished at: .*/Finished at: 2026-01-01T00:00:00Z/'; }
bash "$work/eval.sh" > "$work/merged" 2>&1 || true
normalise < "$work/merged" > "$here/maven_sequential.log"
bash "$work/eval.sh" > "$work/stdout" 2> "$work/stderr" || true
cat "$work/stderr" "$work/stdout" | normalise > "$here/maven_streams_trace_first.log"
cat "$work/stdout" "$work/stderr" | normalise > "$here/maven_streams_output_first.log"
