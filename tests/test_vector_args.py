"""Vector arguments and results (issue 54): fed and read through memory the plugin owns on the
cpu target, judged against recorded outputs; a type no run can feed leaves the compile alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

VECTORS = """func.func @vdot(%a: vector<16xf32>, %b: vector<16xf32>) -> f32 {
  %0 = arith.mulf %a, %b : vector<16xf32>
  %1 = vector.reduction <add>, %0 : vector<16xf32> into f32
  return %1 : f32
}

func.func @vtwice(%a: vector<4x8xi32>, %k: i32) -> (vector<4x8xi32>, i32) {
  %0 = arith.addi %a, %a : vector<4x8xi32>
  return %0, %k : vector<4x8xi32>, i32
}

func.func @strided(%m: memref<4xf32, strided<[2]>>) -> f32 {
  %c0 = arith.constant 0 : index
  %0 = memref.load %m[%c0] : memref<4xf32, strided<[2]>>
  return %0 : f32
}
"""


def test_vectors_are_fed_and_read_and_an_unfeedable_type_compiles(pytester: pytest.Pytester) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    m = rng.integers(-5, 5, (4, 8)).astype(np.int32)
    (pytester.path / "vec.mlir").write_text(VECTORS)
    (pytester.path / "bad.mlir").write_text(VECTORS)
    for stem, wrong in (("vec", 0), ("bad", 1)):  # bad: the recorded outputs sabotaged
        np.savez(pytester.path / f"{stem}.vdot.npz", input_0=a, input_1=b, output_0=np.float32(np.dot(a, b) + wrong))
        np.savez(pytester.path / f"{stem}.vtwice.npz", input_0=m, input_1=np.int32(7),
                 output_0=m + m + wrong, output_1=np.int32(7))
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}")
    kinds = {(r["file"], r["function"], r["stage"]): r["kind"] for r in json.loads(out.read_text())["items"]}
    assert kinds == {
        **{(f, fn, "compile"): "pass" for f in ("vec.mlir", "bad.mlir") for fn in ("vdot", "vtwice", "strided")},
        ("vec.mlir", "vdot", "execute"): "pass", ("vec.mlir", "vtwice", "execute"): "pass",
        ("bad.mlir", "vdot", "execute"): "golden-mismatch", ("bad.mlir", "vtwice", "execute"): "golden-mismatch",
        ("vec.mlir", "strided", "execute"): "unsupported", ("bad.mlir", "strided", "execute"): "unsupported"}
