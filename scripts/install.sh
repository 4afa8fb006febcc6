#!/usr/bin/env bash
# Install activetest into ./.venv (created if missing). Usage: scripts/install.sh [EXTRAS]
# EXTRAS defaults to "hf,dev" (everything the tests need).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-hf,dev}"
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# torch: the CPU build that lies on this machine's disk (a plain `torch` would pull a CUDA build).
if [[ ",$extras," == *",hf,"* ]]; then
  python -m pip install -q "torch==2.13.0"
fi
python -m pip install -q -e ".[${extras}]"
