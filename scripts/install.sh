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
# The browser tests drive Debian's headless Chromium (packages chromium, chromium-driver).
# Installed here when the dev extras are asked for, apt is present and we may use it;
# elsewhere those tests are skipped with a message saying what to install.
if [[ ",$extras," == *",dev,"* ]] && ! command -v chromedriver >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium chromium-driver >/dev/null; }
fi
