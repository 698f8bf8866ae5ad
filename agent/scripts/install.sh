#!/bin/sh
# swebox agent requirements install: install.sh [PIP_ARG...]
#
# Creates a virtual environment at /workspace/.venv that sees the image's
# packages, installs the requirements listed in
# /workspace/.venv/.swebox-requirements.txt with the image's pip, and records
# what it installed in /workspace/.venv/.swebox-freeze.txt.
set -e
python3 -m venv --system-site-packages --without-pip /workspace/.venv
/workspace/.venv/bin/python -m pip install --disable-pip-version-check --no-input \
  --no-cache-dir --progress-bar off --no-warn-script-location \
  -r /workspace/.venv/.swebox-requirements.txt "$@"
/workspace/.venv/bin/python -m pip freeze --local --disable-pip-version-check >/workspace/.venv/.swebox-freeze.txt
