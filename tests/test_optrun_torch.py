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


# erf and tanh, and a boolean mask kept in a buffer of i1 between two loops
MASKED_MATH = """#id = affine_map<(d0) -> (d0)>
func.func @forward(%a: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xi1>
  %mask = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xi1>) {
  ^bb0(%x: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %zero : f32
    linalg.yield %c : i1
  } -> tensor<8xi1>
  %init = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %mask : tensor<8xf32>, tensor<8xi1>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %m: i1, %o: f32):
    %erf = math.erf %x : f32
    %tanh = math.tanh %x : f32
    %s = arith.select %m, %erf, %tanh : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


def test_the_cpu_starting_point_takes_math_and_boolean_buffers(pytester: pytest.Pytester) -> None:
    from pytest_mlir_snippets.tools.new_iteration import new_iteration

    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MASKED_MATH)
    written = new_iteration(run)
    (written.folder / "hypothesis.txt").write_text("the starting point\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "compile or correctness")
    result.assert_outcomes(passed=2)


def test_the_cpu_starting_pipeline_lowers_math_as_the_cpu_target_does() -> None:
    from pytest_mlir_snippets.tools.new_iteration import CPU_PIPELINE
    from pytest_mlir_snippets.worker.targets.cpu import TO_LLVM

    for step in ("func.func(math-expand-ops{ops=rsqrt})", "convert-math-to-funcs", "convert-math-to-libm",
                 "convert-math-to-llvm", "convert-complex-to-standard"):
        assert step in CPU_PIPELINE and step in TO_LLVM, step
