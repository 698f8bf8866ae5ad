#!/bin/sh
# swebox agent wrapper: run.sh STATS [SECRETS_DIR...] -- CMD [ARG...]
#
# Exports every file of each SECRETS_DIR as an environment variable named
# after the file (the value byte for byte, trailing newlines kept), deletes
# the per-command directories (secrets-*), activates the workspace's virtual
# environment when there is one, and hands over to the launcher, which runs
# CMD and writes its resource usage to STATS. Without python3 in the image
# it runs CMD directly.
stats=$1
shift
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  d=$1
  shift
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    v=$(cat "$f" && printf x) || continue
    export "${f##*/}=${v%x}"
  done
  case "${d##*/}" in secrets-*) rm -rf "$d" ;; esac
done
[ "$1" = "--" ] && shift
if [ -z "$SWEBOX_NO_VENV" ] && [ -x /workspace/.venv/bin/python ]; then
  VIRTUAL_ENV=/workspace/.venv
  PATH=/workspace/.venv/bin:$PATH
  export VIRTUAL_ENV PATH
fi
unset SWEBOX_NO_VENV
for py in /usr/bin/python3 /usr/local/bin/python3; do
  if [ -x "$py" ]; then
    exec "$py" -I -S /opt/swebox/launch.py "$stats" "$@"
  fi
done
unset SWEBOX_EGRESS_SOCKET
exec "$@"
