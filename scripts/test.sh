#!/usr/bin/env bash
# Install everything the tests need into ./.venv, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The three venvs are independent and their installs mostly wait on downloads: they run
# side by side (one after another on a fresh 2-core machine: 7.3, 1.5 and 1 minutes).
# A real vLLM (CPU build) in .venv-vllm, for tests/models/test_vllm_real.py, and a real
# Label Studio in .venv-ls, for tests/session/test_labelio.py's round trips:
logs="$(mktemp -d)"; trap 'rm -rf "$logs"' EXIT
bash scripts/install_vllm.sh >"$logs/vllm.log" 2>&1 & vllm=$!
bash scripts/install_label_studio.sh >"$logs/ls.log" 2>&1 & ls=$!
# ray: tests/models/test_ray_score.py scores on a real local Ray cluster (skipped without it)
bash scripts/install.sh hf,dev,ray
for job in "vllm:$vllm" "ls:$ls"; do
  if ! wait "${job#*:}"; then
    echo "scripts/test.sh: installing ${job%%:*} failed:" >&2; cat "$logs/${job%%:*}.log" >&2
    exit 1
  fi
  tail -n 1 "$logs/${job%%:*}.log"
done
. .venv/bin/activate
ruff check src tests benchmarks
# pytest exits 5 when it collected no test: treat that as a failure, not a pass.
set +e
# Two workers (pytest-xdist), one test file each at a time (module fixtures such as a
# running server stay in one process): the suite is mostly single-threaded, so on the
# 2-core machine this about halves its 25 minutes. WORKERS=0 runs it in one process.
python -m pytest -q -n "${WORKERS:-2}" --dist loadfile "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
