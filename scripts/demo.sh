#!/usr/bin/env bash
# Install activetest into ./.venv and run the offline demo on the bundled models.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh dev
. .venv/bin/activate
activetest demo "$@"
