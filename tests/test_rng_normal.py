"""``stablehlo.rng`` NORMAL on the cpu target (issue 42): IREE's Box-Muller expansion over
``std::mt19937{0}``, so IREE's own e2e expectations hold; one pytester run, sabotaged too."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_mlir_snippets.worker.lowering.shlo.rng import box_muller_constants

# IREE's tests/e2e/stablehlo_ops/rng_normal.mlir, as written
IREE_VALUES = [[0.570861, 0.317593, -0.726538, 1.45925, -1.59632],
               [-0.639956, 0.703875, -0.8801, -0.848389, -0.453391],
               [0.645563, 0.543174, 0.2255, 0.0809385, -1.17198]]

FILE = """func.func @rng_normal_2d() {{
  %mu = util.unfoldable_constant dense<{mu}> : tensor<f32>
  %sigma = util.unfoldable_constant dense<{sigma}> : tensor<f32>
  %shape = util.unfoldable_constant dense<[3, 5]>  : tensor<2xi64>
  %res = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL
      : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x5xf32>
  check.expect_almost_eq_const(%res, dense<{expected}> : tensor<3x5xf32>) : tensor<3x5xf32>
  return
}}
"""


def _values(mu: float, sigma: float, count: int) -> np.ndarray:
    logs, cosines, sines = box_muller_constants(count)
    mag = np.float32(sigma) * np.sqrt(logs)
    return np.concatenate([mag * cosines + np.float32(mu), mag * sines + np.float32(mu)])[:count]


def test_the_draws_are_irees_and_normal() -> None:
    assert np.allclose(_values(0.0, 1.0, 15).reshape(3, 5), IREE_VALUES, atol=1e-5)
    many = _values(0.0, 1.0, 20000)
    assert abs(many.mean()) < 0.03 and abs(many.std() - 1.0) < 0.03
    assert np.array_equal(_values(0.0, 1.0, 7), _values(0.0, 1.0, 8)[:7])  # stateless: the same prefix


def test_rng_normal_runs_on_cpu_as_iree_expects(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch_mlir")
    scaled = (np.array(IREE_VALUES) * 3.0 + 2.0).round(5).tolist()
    files = {"iree": FILE.format(mu="0.0", sigma="1.0", expected=IREE_VALUES),
             "scaled": FILE.format(mu="2.0", sigma="3.0", expected=scaled),
             "sabotaged": FILE.format(mu="0.0", sigma="1.0", expected=IREE_VALUES).replace("0.0809385", "0.0819385"),
             "unscaled": FILE.format(mu="2.0", sigma="3.0", expected=IREE_VALUES)}
    for name, text in files.items():
        (pytester.path / f"{name}.mlir").write_text(text)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-n", "0", f"--mlir-json={out}")
    kinds = {r["file"].removesuffix(".mlir"): r for r in json.loads(out.read_text())["items"]
             if r["stage"] == "execute"}
    assert kinds["iree"]["kind"] == "pass" and kinds["iree"]["golden"] == "checks", kinds["iree"]["message"]
    assert kinds["iree"]["computed"] == "runtime"
    assert kinds["scaled"]["kind"] == "pass", kinds["scaled"]["message"]
    assert kinds["sabotaged"]["kind"] == "golden-mismatch" and "index [2, 3]" in kinds["sabotaged"]["message"]
    assert kinds["unscaled"]["kind"] == "golden-mismatch"
