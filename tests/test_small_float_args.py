"""Arguments and results of f8, f6, f4 and sub-byte integer types (issue 42): fed and read in
their wide type (f32, i8), converted exactly inside the entry, on the cpu target and in the
interpreter's reference run. One pytester run; recorded outputs sabotaged."""

from __future__ import annotations

import json

import numpy as np
import pytest

SNIPPETS = """func.func @f8_add(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %r = stablehlo.add %a, %b : tensor<4xf8E4M3FN>
  return %r : tensor<4xf8E4M3FN>
}
func.func @f4_mul(%a: tensor<3xf4E2M1FN>) -> tensor<3xf4E2M1FN> {
  %r = stablehlo.multiply %a, %a : tensor<3xf4E2M1FN>
  return %r : tensor<3xf4E2M1FN>
}
func.func @f6_to_f32(%a: tensor<3xf6E3M2FN>) -> tensor<3xf32> {
  %r = stablehlo.convert %a : (tensor<3xf6E3M2FN>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
func.func @i4_neg(%a: tensor<5xi4>) -> tensor<5xi4> {
  %r = stablehlo.negate %a : tensor<5xi4>
  return %r : tensor<5xi4>
}
"""


def test_small_types_are_fed_wide(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch_mlir")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([0.5, 1.5, -2.0, 448.0], dtype=np.float32)
    b = np.array([0.25, 1.75, 3.0, 64.0], dtype=np.float32)
    f8 = ml_dtypes.float8_e4m3fn
    right = (a.astype(f8).astype(np.float32) + b.astype(f8).astype(np.float32)).astype(f8).astype(np.float32)
    assert right[1] == 3.25 and np.isnan(right[3])  # rounded to f8; 512 is past its largest finite (448)
    for name, out in {"good": right, "bad": np.where(np.isnan(right), right, right * 2)}.items():
        (pytester.path / f"{name}.mlir").write_text(SNIPPETS)
        np.savez(pytester.path / f"{name}.f8_add.npz", input_0=a, input_1=b, output_0=out)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-n", "0", f"--mlir-json={out}")
    records = {(r["file"].removesuffix(".mlir"), r["name"]): r for r in json.loads(out.read_text())["items"]}
    compile_ = records[("good", "f8_add[compile]")]
    assert compile_["kind"] == "pass" and compile_["inputs"] == ["tensor<4xf32>", "tensor<4xf32>"]
    assert "argument #0 tensor<4xf8E4M3FN> fed as tensor<4xf32>" in compile_["info"]["widened"]
    assert records[("good", "f8_add[execute]")]["kind"] == "pass"
    assert records[("good", "f8_add[execute]")]["golden"] == "recorded"
    assert records[("bad", "f8_add[execute]")]["kind"] == "golden-mismatch"
    for name in ("f4_mul", "f6_to_f32", "i4_neg"):  # against the interpreter, fed the same wide values
        record = records[("good", f"{name}[execute]")]
        assert record["kind"] == "pass" and record["golden"] == "interpreter", (name, record["message"])
