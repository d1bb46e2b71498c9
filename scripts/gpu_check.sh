#!/usr/bin/env bash
# The GPU check in one command, for a machine with a CUDA GPU: at most 8 minutes.
# pytest -m gpu, the examples, tt-mlir's StableHLO snippets and a slice of openxla's
# testdata on --mlir-target cuda (and iree-cuda where installed), examples/runs/cuda_matmul
# end to end; writes docs/gpu.md (see scripts/gpu_check.py). Without a CUDA device it stops
# at once, saying "no CUDA device" (exit code 2).
#   bash scripts/gpu_check.sh [--corpus ../shared/corpus] [--workers 8] [--doc docs/gpu.md]
# PYTHON picks the interpreter (default: .venv/bin/python if there, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
if ! "$python" -c 'import pytest_mlir_snippets' 2>/dev/null; then
  echo "gpu_check: pytest-mlir-snippets is not installed for $python (pip install -e '.[all]')" >&2
  exit 2
fi
exec timeout --kill-after=10 480 "$python" scripts/gpu_check.py "$@"
