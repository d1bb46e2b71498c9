"""The cpu starting point of an optimization run (``new-iteration``) on PyTorch models:
``bench/torch_models/run.py`` on a representative few (the whole set is the bench's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "torch_models" / "run.py"


@pytest.mark.slow
def test_the_cpu_starting_point_compiles_and_matches_pytorch(tmp_path: Path) -> None:
    """erf (GELU), tanh, exp, log, rsqrt (``misc``), a boolean mask (attention: i1 buffers
    that finalize-memref-to-llvm asserts on), a recurrent layer's tuple of outputs."""
    models = "gelu_mlp,mha,misc,lstm_tuple"
    done = subprocess.run([sys.executable, str(BENCH), str(tmp_path), "-k", models], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 passed" in done.stdout, done.stdout
