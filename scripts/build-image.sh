#!/usr/bin/env bash
# Builds the default swebox test image offline from Debian packages:
# mmdebstrap writes a root filesystem tar to stdout and `docker import` turns
# it into an image. No container registry is needed.
#
#   scripts/build-image.sh [IMAGE]          (default: $SWEBOX_TEST_IMAGE or swebox/python:bookworm)
#
# Extra Debian packages: SWEBOX_IMAGE_EXTRA="pkg1,pkg2". With
# SWEBOX_IMAGE_BASE=IMAGE (an image this script built), the extra packages are
# installed over that image by a `docker build` (apt-get in the build step)
# instead of a root filesystem made from scratch: the same packages, in a
# fraction of the time.
set -euo pipefail

image=${1:-${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}}
suite=${SWEBOX_IMAGE_SUITE:-bookworm}
packages=python3,python3-pytest,python3-pytest-xdist,python3-venv,python3-pip,python3-setuptools,python3-wheel,git,patch,procps,ca-certificates
if [ -n "${SWEBOX_IMAGE_EXTRA:-}" ]; then
  packages="$packages,$SWEBOX_IMAGE_EXTRA"
fi

if [ -n "${SWEBOX_IMAGE_BASE:-}" ]; then
  [ -n "${SWEBOX_IMAGE_EXTRA:-}" ] || { echo "build-image: SWEBOX_IMAGE_BASE needs SWEBOX_IMAGE_EXTRA" >&2; exit 1; }
  docker image inspect "$SWEBOX_IMAGE_BASE" >/dev/null 2>&1 || { echo "build-image: base image $SWEBOX_IMAGE_BASE is missing" >&2; exit 1; }
  echo "build-image: building $image from $SWEBOX_IMAGE_BASE with $SWEBOX_IMAGE_EXTRA" >&2
  # The engine's output is shown only when the build fails (the legacy
  # builder, which needs no buildx, prints a deprecation notice each time).
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  DOCKER_BUILDKIT=0 docker build -q --force-rm -t "$image" - >"$out" 2>&1 <<EOF || { cat "$out" >&2; exit 1; }
FROM $SWEBOX_IMAGE_BASE
RUN apt-get update -qq && \\
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \\
      -o 'Dpkg::Options::=--path-exclude=/usr/share/doc/*' \\
      -o 'Dpkg::Options::=--path-exclude=/usr/share/man/*' \\
      -o 'Dpkg::Options::=--path-exclude=/usr/share/locale/*' \\
      $(echo "$SWEBOX_IMAGE_EXTRA" | tr , ' ') >/dev/null && \\
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*
EOF
  echo "build-image: built $image" >&2
  exit 0
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "build-image: installing mmdebstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y mmdebstrap >&2
  else
    echo "build-image: mmdebstrap is missing; install it with 'apt-get install mmdebstrap'" >&2
    exit 1
  fi
fi

echo "build-image: building $image from Debian $suite ($packages)" >&2
# The customize hooks add the unprivileged user the sandbox runs as (uid 1000)
# and let git work in workspaces owned by another uid (bind mounts).
mmdebstrap --variant=minbase --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/bash sandbox' \
  --customize-hook='chroot "$1" git config --system --add safe.directory "*"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  "$suite" - |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    - "$image" >/dev/null
echo "build-image: built $image" >&2
