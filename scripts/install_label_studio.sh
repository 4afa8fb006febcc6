#!/usr/bin/env bash
# A real Label Studio (PyPI package label-studio) in ./.venv-ls, for the tests that round-trip
# labels through its own server (tests/session/test_labelio.py, "a real Label Studio").
#
# A venv of its own: Label Studio is a Django application with pins of its own, not a
# dependency of activetest; the tests talk to it over HTTP only. Never run
# `label-studio --version` to check it: that starts a server. Without this venv (or
# ACTIVETEST_LABEL_STUDIO naming a label-studio command) those tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${LABEL_STUDIO_VERSION:-1.23.2}"
py="${PYTHON:-python3}"
[ -x .venv-ls/bin/python ] || "$py" -m venv .venv-ls
if ! .venv-ls/bin/python -c "import label_studio" >/dev/null 2>&1; then
  .venv-ls/bin/python -m pip install -q --upgrade pip
  .venv-ls/bin/python -m pip install -q "label-studio==${version}"
fi
.venv-ls/bin/python -c "import label_studio; print('Label Studio', label_studio.__version__)"
